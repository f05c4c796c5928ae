{{/* The chart name, or nameOverride. */}}
{{- define "eval-operator.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The fully qualified name of the release's objects: the release name, followed
by the chart name unless the release name already contains it.
*/}}
{{- define "eval-operator.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* The chart label value: name-version. */}}
{{- define "eval-operator.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels of every object. */}}
{{- define "eval-operator.labels" -}}
helm.sh/chart: {{ include "eval-operator.chart" . }}
{{ include "eval-operator.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* Labels that select the manager's Pods. */}}
{{- define "eval-operator.selectorLabels" -}}
app.kubernetes.io/name: {{ include "eval-operator.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
control-plane: controller-manager
{{- end }}

{{/* The manager's service account. */}}
{{- define "eval-operator.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "eval-operator.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required with serviceAccount.create=false: name the existing account the manager runs as (the chart would otherwise bind its roles to the namespace's default account)" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The manager's image reference; a digest wins over a tag. */}}
{{- define "eval-operator.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{/* The namespace of the leader election Lease. */}}
{{- define "eval-operator.leaderElectionNamespace" -}}
{{- default .Release.Namespace .Values.leaderElection.namespace }}
{{- end }}

{{/* Where the REST server's TLS Secret is mounted. */}}
{{- define "eval-operator.tlsDir" -}}
/etc/eval-operator/tls
{{- end }}

{{/* The Secret of the cert-manager serving certificate (certManager.enabled). */}}
{{- define "eval-operator.servingCertSecret" -}}
{{ include "eval-operator.fullname" . }}-serving-cert
{{- end }}

{{/* Where the serving certificate's Secret is mounted. */}}
{{- define "eval-operator.servingCertDir" -}}
/etc/eval-operator/serving-cert
{{- end }}

{{/* Where caBundle.configMapName is mounted; SSL_CERT_DIR points there. */}}
{{- define "eval-operator.caDir" -}}
/etc/eval-operator/ca
{{- end }}

{{/* The pod's volumes: the chart's own, then extraVolumes. */}}
{{- define "eval-operator.volumes" -}}
{{- $v := .Values }}
{{- $volumes := list }}
{{- if and $v.serveApi.enabled $v.tls.certSecret }}
{{- $volumes = append $volumes (dict "name" "tls" "secret" (dict "secretName" $v.tls.certSecret)) }}
{{- end }}
{{- if $v.certManager.enabled }}
{{- $volumes = append $volumes (dict "name" "serving-cert" "secret" (dict "secretName" (include "eval-operator.servingCertSecret" .))) }}
{{- end }}
{{- with $v.caBundle.configMapName }}
{{- $volumes = append $volumes (dict "name" "ca-bundle" "configMap" (dict "name" .)) }}
{{- end }}
{{- toYaml (concat $volumes $v.extraVolumes) }}
{{- end }}

{{/* The manager container's volume mounts: the chart's own, then extraVolumeMounts. */}}
{{- define "eval-operator.volumeMounts" -}}
{{- $v := .Values }}
{{- $mounts := list }}
{{- if and $v.serveApi.enabled $v.tls.certSecret }}
{{- $mounts = append $mounts (dict "name" "tls" "mountPath" (include "eval-operator.tlsDir" .) "readOnly" true) }}
{{- end }}
{{- if $v.certManager.enabled }}
{{- $mounts = append $mounts (dict "name" "serving-cert" "mountPath" (include "eval-operator.servingCertDir" .) "readOnly" true) }}
{{- end }}
{{- if $v.caBundle.configMapName }}
{{- $mounts = append $mounts (dict "name" "ca-bundle" "mountPath" (include "eval-operator.caDir" .) "readOnly" true) }}
{{- end }}
{{- toYaml (concat $mounts $v.extraVolumeMounts) }}
{{- end }}

{{/*
The manager container's environment: SSL_CERT_DIR for caBundle (Go reads the
image's bundle file and then every file there), then extraEnv.
*/}}
{{- define "eval-operator.env" -}}
{{- $env := list }}
{{- if .Values.caBundle.configMapName }}
{{- $env = append $env (dict "name" "SSL_CERT_DIR" "value" (include "eval-operator.caDir" .)) }}
{{- end }}
{{- toYaml (concat $env .Values.extraEnv) }}
{{- end }}

{{/*
The directory of the REST server's tls.crt and tls.key: tls.certSecret if
set, else the cert-manager serving certificate; empty serves plain HTTP.
*/}}
{{- define "eval-operator.restTLSDir" -}}
{{- if .Values.tls.certSecret }}
{{- include "eval-operator.tlsDir" . }}
{{- else if .Values.certManager.enabled }}
{{- include "eval-operator.servingCertDir" . }}
{{- end }}
{{- end }}

{{/*
The REST server's base URL as Pods reach it: serveApi.url, else the API
Service's cluster DNS name.
*/}}
{{- define "eval-operator.serveApiURL" -}}
{{- if .Values.serveApi.url }}
{{- .Values.serveApi.url }}
{{- else }}
{{- printf "%s://%s-api.%s.svc:%v/api/v2" (ternary "https" "http" (not (empty (include "eval-operator.restTLSDir" .)))) (include "eval-operator.fullname" .) .Release.Namespace .Values.serveApi.port }}
{{- end }}
{{- end }}

{{/*
The manager's flags, one per setting; toYaml quotes whatever the values hold.
Optional settings are left out when empty so the manager's defaults apply.
*/}}
{{- define "eval-operator.args" -}}
{{- $v := .Values }}
{{- $args := list }}
{{- if $v.leaderElection.enabled }}
{{- $args = append $args "--leader-elect" }}
{{- $args = append $args (printf "--leader-election-namespace=%s" (include "eval-operator.leaderElectionNamespace" .)) }}
{{- end }}
{{- $args = append $args (printf "--health-probe-bind-address=:%v" $v.healthProbePort) }}
{{- if $v.metrics.enabled }}
{{- $args = append $args (printf "--metrics-bind-address=:%v" $v.metrics.port) }}
{{- $args = append $args (printf "--metrics-secure=%t" $v.metrics.secure) }}
{{- if and $v.metrics.secure $v.certManager.enabled }}
{{- $args = append $args (printf "--metrics-cert-dir=%s" (include "eval-operator.servingCertDir" .)) }}
{{- end }}
{{- if $v.metrics.namespaceLabel }}
{{- $args = append $args "--metrics-namespace-label" }}
{{- end }}
{{- else }}
{{- $args = append $args "--metrics-bind-address=0" }}
{{- end }}
{{- with $v.apiUrl }}
{{- $args = append $args (printf "--api-url=%s" .) }}
{{- end }}
{{- with $v.defaultApiKeySecret }}
{{- $args = append $args (printf "--default-api-key-secret=%s" .) }}
{{- end }}
{{- $args = append $args (printf "--api-qps=%v" $v.apiQps) }}
{{- $args = append $args (printf "--api-burst=%v" $v.apiBurst) }}
{{- if $v.apiMaxInFlight }}
{{- $args = append $args (printf "--api-max-in-flight=%v" $v.apiMaxInFlight) }}
{{- end }}
{{- $args = append $args (printf "--api-timeout=%s" $v.apiTimeout) }}
{{- $args = append $args (printf "--bulk-delete-batch-size=%v" $v.bulkDeleteBatchSize) }}
{{- $args = append $args (printf "--max-concurrent-reconciles=%v" $v.maxConcurrentReconciles) }}
{{- $args = append $args (printf "--drift-interval=%s" $v.driftInterval) }}
{{- if $v.serveApi.enabled }}
{{- $args = append $args (printf "--serve-api=:%v" $v.serveApi.port) }}
{{- $args = append $args (printf "--serve-api-url=%s" (include "eval-operator.serveApiURL" .)) }}
{{- $args = append $args (printf "--rest-sync-timeout=%s" $v.restSyncTimeout) }}
{{- $args = append $args (printf "--rest-drain-delay=%s" $v.restDrainDelay) }}
{{- $args = append $args (printf "--rest-max-inflight=%v" $v.restMaxInflight) }}
{{- $args = append $args (printf "--rest-tenant-qps=%v" $v.restTenantQps) }}
{{- $args = append $args (printf "--rest-tenant-burst=%v" $v.restTenantBurst) }}
{{- $args = append $args (printf "--rest-tenant-read-qps=%v" $v.restTenantReadQps) }}
{{- $args = append $args (printf "--rest-tenant-read-burst=%v" $v.restTenantReadBurst) }}
{{- $budgets := list }}
{{- range (.Files.Get "files/kinds.yaml" | fromYaml).budgeted }}
{{- $budgets = append $budgets (printf "%s=%v" .kind (index $v.tenantQuota .value)) }}
{{- end }}
{{- $args = append $args (printf "--rest-tenant-max=%s" (join "," $budgets)) }}
{{- with include "eval-operator.restTLSDir" . }}
{{- $args = append $args (printf "--tls-cert-file=%s/tls.crt" .) }}
{{- $args = append $args (printf "--tls-key-file=%s/tls.key" .) }}
{{- end }}
{{- end }}
{{- with $v.watchNamespaces }}
{{- $args = append $args (printf "--watch-namespaces=%s" (join "," .)) }}
{{- end }}
{{- if and $v.serveApi.enabled $v.restNamespaceSelector }}
{{- $args = append $args (printf "--rest-namespace-selector=%s" $v.restNamespaceSelector) }}
{{- end }}
{{- if $v.allowInsecureApiUrl }}
{{- $args = append $args "--allow-insecure-api-url" }}
{{- end }}
{{- with $v.namespacedServiceHosts }}
{{- $args = append $args (printf "--namespaced-service-hosts=%s" (join "," .)) }}
{{- end }}
{{- $args = append $args (printf "--zap-log-level=%v" $v.logLevel) }}
{{- toYaml (concat $args $v.extraArgs) }}
{{- end }}

{{/*
Whole seconds (rounded up) of a Go duration such as 10s, 1m30s or 500ms.
*/}}
{{- define "eval-operator.seconds" -}}
{{- $units := dict "ns" 0.000000001 "us" 0.000001 "µs" 0.000001 "ms" 0.001 "s" 1.0 "m" 60.0 "h" 3600.0 }}
{{- $total := 0.0 }}
{{- range $part := regexFindAll "[0-9.]+(ns|us|µs|ms|s|m|h)" (toString .) -1 }}
{{- $number := regexFind "^[0-9.]+" $part }}
{{- $total = addf $total (mulf (float64 $number) (get $units (trimPrefix $number $part))) }}
{{- end }}
{{- ceil $total | int }}
{{- end }}

{{/*
The pod's terminationGracePeriodSeconds: longer than the manager's graceful
shutdown (cmd/main.go gracefulShutdownTimeout: the longest of --api-timeout
and, with the REST server, --rest-drain-delay plus --rest-sync-timeout plus
5s for the requests in flight, plus 5s), so a rolling update never SIGKILLs
a create in flight.
*/}}
{{- define "eval-operator.terminationGracePeriodSeconds" -}}
{{- $longest := include "eval-operator.seconds" .Values.apiTimeout | int }}
{{- if .Values.serveApi.enabled }}
{{- $rest := add (include "eval-operator.seconds" .Values.restDrainDelay | int) (include "eval-operator.seconds" .Values.restSyncTimeout | int) 5 }}
{{- $longest = max $longest $rest }}
{{- end }}
{{- add $longest 5 10 }}
{{- end }}

{{/*
The pods' topology spread: topologySpreadConstraints when set, else, with
more than one replica, one pod per node where the scheduler can, so a node
failure takes one REST server (every replica serves) and at most the leader.
ScheduleAnyway still schedules on a single-node cluster.
*/}}
{{- define "eval-operator.topologySpreadConstraints" -}}
{{- if .Values.topologySpreadConstraints }}
{{- toYaml .Values.topologySpreadConstraints }}
{{- else if gt (int .Values.replicaCount) 1 }}
- maxSkew: 1
  topologyKey: kubernetes.io/hostname
  whenUnsatisfiable: ScheduleAnyway
  labelSelector:
    matchLabels:
      {{- include "eval-operator.selectorLabels" . | nindent 6 }}
  matchLabelKeys:
  - pod-template-hash
{{- else }}
[]
{{- end }}
{{- end }}

{{/*
Settings the chart refuses, each with what to do instead. Rendered by the
Deployment, so that every install and upgrade checks them.
*/}}
{{- define "eval-operator.validate" -}}
{{- if and (gt (int .Values.replicaCount) 1) (not .Values.leaderElection.enabled) }}
{{- fail (printf "replicaCount is %d with leaderElection.enabled=false: every replica would reconcile the same objects at once and could create each Metric in the Evaluation Service more than once. Set leaderElection.enabled=true, or replicaCount=1." (int .Values.replicaCount)) }}
{{- end }}
{{- if and .Values.serveApi.enabled (ne .Values.serveApi.service.type "ClusterIP") (not (include "eval-operator.restTLSDir" .)) (not .Values.serveApi.service.allowInsecure) }}
{{- fail (printf "serveApi.service.type is %s without TLS: API keys would cross the network in clear text. Set tls.certSecret or certManager.enabled, or serveApi.service.allowInsecure=true to accept plain HTTP." .Values.serveApi.service.type) }}
{{- end }}
{{- end }}
