/*
Copyright 2026 The eval-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package executorpolicy

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

var root = field.NewPath("spec", "executor", "template")

// grant is a service's executor grant: ServiceAccount evaluator, Secret
// system-token, and the run's key in evaluation-api-key.
var grant = Grant{ServiceAccountName: "evaluator", Secrets: []string{"system-token"}, KeySecret: "evaluation-api-key",
	Source: "EvaluationService/default"}

// valid is an ordinary executor template: an image, a command, env from
// a value, an allowed Secret and the downward API, a scratch volume.
func valid() *corev1.PodTemplateSpec {
	return &corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "evaluator"}},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name: "executor", Image: "example.com/assistant:1.4", Command: []string{"/assistant", "execute"},
				Env: []corev1.EnvVar{
					{Name: "MODEL", Value: "m-2"},
					{Name: "TOKEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
						LocalObjectReference: corev1.LocalObjectReference{Name: "system-token"}, Key: "token"}}},
					{Name: "POD", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
				},
				VolumeMounts: []corev1.VolumeMount{{Name: "scratch", MountPath: "/tmp"}},
			}},
			Volumes: []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
		},
	}
}

func TestApplyValid(t *testing.T) {
	tmpl := valid()
	if errs := Apply(tmpl, grant, root); len(errs) > 0 {
		t.Fatalf("an ordinary template is refused: %v", errs)
	}
	spec := tmpl.Spec
	if spec.ServiceAccountName != "evaluator" || spec.AutomountServiceAccountToken != nil {
		t.Errorf("runs as %q (automount %v), want the granted evaluator with its own token setting",
			spec.ServiceAccountName, spec.AutomountServiceAccountToken)
	}
	if sc := spec.SecurityContext; !ptr.Deref(sc.RunAsNonRoot, false) ||
		sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("pod securityContext %+v, want runAsNonRoot and RuntimeDefault filled in", sc)
	}
	c := spec.Containers[0].SecurityContext
	if c == nil || c.AllowPrivilegeEscalation == nil || *c.AllowPrivilegeEscalation ||
		c.Capabilities == nil || len(c.Capabilities.Drop) != 1 || c.Capabilities.Drop[0] != "ALL" {
		t.Errorf("container securityContext %+v, want allowPrivilegeEscalation false and drop ALL", c)
	}
}

// Without a named ServiceAccount, the Pods run as default with no token.
func TestApplyDefaultAccount(t *testing.T) {
	tmpl := valid()
	tmpl.Spec.ServiceAccountName = "default"
	g := grant
	g.ServiceAccountName = ""
	if errs := Apply(tmpl, g, root); len(errs) > 0 {
		t.Fatalf("refused: %v", errs)
	}
	if tmpl.Spec.ServiceAccountName != "default" || !ptr.Equal(tmpl.Spec.AutomountServiceAccountToken, ptr.To(false)) {
		t.Errorf("runs as %q, automount %v; want default without a token",
			tmpl.Spec.ServiceAccountName, tmpl.Spec.AutomountServiceAccountToken)
	}
}

// What a template sets explicitly within the profile stays as it is.
func TestApplyKeepsExplicitSettings(t *testing.T) {
	tmpl := valid()
	tmpl.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](1000),
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost, LocalhostProfile: ptr.To("p.json")}}
	tmpl.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{
		Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"NET_BIND_SERVICE"}, Drop: []corev1.Capability{"NET_RAW"}}}
	if errs := Apply(tmpl, grant, root); len(errs) > 0 {
		t.Fatalf("refused: %v", errs)
	}
	if p := tmpl.Spec.SecurityContext.SeccompProfile; p.Type != corev1.SeccompProfileTypeLocalhost {
		t.Errorf("seccomp profile %+v, want the template's Localhost one", p)
	}
	if d := tmpl.Spec.Containers[0].SecurityContext.Capabilities.Drop; len(d) != 2 || d[1] != "ALL" {
		t.Errorf("drop %v, want NET_RAW and ALL", d)
	}
}

func TestApplyRefuses(t *testing.T) {
	container := func(f func(*corev1.Container)) func(*corev1.PodSpec) {
		return func(s *corev1.PodSpec) { f(&s.Containers[0]) }
	}
	securityContext := func(f func(*corev1.SecurityContext)) func(*corev1.PodSpec) {
		return container(func(c *corev1.Container) {
			c.SecurityContext = &corev1.SecurityContext{}
			f(c.SecurityContext)
		})
	}
	volume := func(src corev1.VolumeSource) func(*corev1.PodSpec) {
		return func(s *corev1.PodSpec) {
			s.Volumes = append(s.Volumes, corev1.Volume{Name: "extra", VolumeSource: src})
		}
	}
	for _, tc := range []struct {
		name   string
		mutate func(*corev1.PodSpec)
		// field and message are the refusal's path and part of its text.
		field, message string
	}{
		{"another ServiceAccount", func(s *corev1.PodSpec) { s.ServiceAccountName = "deployer" },
			"spec.executor.template.spec.serviceAccountName", `executors run as ServiceAccount "evaluator"`},
		{"another ServiceAccount by the old field", func(s *corev1.PodSpec) { s.DeprecatedServiceAccount = "deployer" },
			"spec.executor.template.spec.serviceAccount", "spec.executor.serviceAccountName"},
		{"host network", func(s *corev1.PodSpec) { s.HostNetwork = true },
			"spec.executor.template.spec.hostNetwork", "may not share the node's namespaces"},
		{"host PIDs", func(s *corev1.PodSpec) { s.HostPID = true }, "spec.executor.template.spec.hostPID", "node's namespaces"},
		{"host IPC", func(s *corev1.PodSpec) { s.HostIPC = true }, "spec.executor.template.spec.hostIPC", "node's namespaces"},
		{"a node", func(s *corev1.PodSpec) { s.NodeName = "node-1" },
			"spec.executor.template.spec.nodeName", "the scheduler places executors"},
		{"a hostPath volume", volume(corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}),
			"spec.executor.template.spec.volumes[1].hostPath", `volume "extra" is of type hostPath`},
		{"a claim", volume(corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "db"}}),
			"spec.executor.template.spec.volumes[1].persistentVolumeClaim", "may use only emptyDir"},
		{"a CSI volume", volume(corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: "secrets-store.csi.k8s.io"}}),
			"spec.executor.template.spec.volumes[1].csi", "of type csi"},
		{"an env from another Secret", container(func(c *corev1.Container) {
			c.Env = append(c.Env, corev1.EnvVar{Name: "DB", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: "db-password"}, Key: "password"}}})
		}), "spec.executor.template.spec.containers[0].env[3].valueFrom.secretKeyRef.name",
			`Secret "db-password" is not one an executor may use: allow it in spec.executor.secrets of EvaluationService/default`},
		{"envFrom another Secret", container(func(c *corev1.Container) {
			c.EnvFrom = []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: "db-password"}}}}
		}), "spec.executor.template.spec.containers[0].envFrom[0].secretRef.name", `Secret "db-password"`},
		{"an init container's env from another Secret", func(s *corev1.PodSpec) {
			s.InitContainers = []corev1.Container{{Name: "init", Image: "busybox", Env: []corev1.EnvVar{{Name: "DB",
				ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
					LocalObjectReference: corev1.LocalObjectReference{Name: "db-password"}, Key: "password"}}}}}}
		}, "spec.executor.template.spec.initContainers[0].env[0].valueFrom.secretKeyRef.name", `Secret "db-password"`},
		{"a secret volume", volume(corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "db-password"}}),
			"spec.executor.template.spec.volumes[1].secret.secretName", `Secret "db-password"`},
		{"a projected Secret", volume(corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "db-password"}}}}}}),
			"spec.executor.template.spec.volumes[1].projected.sources[0].secret.name", `Secret "db-password"`},
		{"an image pull Secret", func(s *corev1.PodSpec) {
			s.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "registry"}}
		}, "spec.executor.template.spec.imagePullSecrets[0].name", `Secret "registry"`},
		{"a privileged container", securityContext(func(sc *corev1.SecurityContext) { sc.Privileged = ptr.To(true) }),
			"spec.executor.template.spec.containers[0]", "the restricted Pod Security profile forbids privileged"},
		{"root", securityContext(func(sc *corev1.SecurityContext) { sc.RunAsUser = ptr.To[int64](0) }),
			"spec.executor.template.spec.containers[0]", "runAsUser=0"},
		{"runAsNonRoot false", func(s *corev1.PodSpec) {
			s.SecurityContext = &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(false)}
		}, "spec.executor.template.spec", "runAsNonRoot != true"},
		{"an added capability", securityContext(func(sc *corev1.SecurityContext) {
			sc.Capabilities = &corev1.Capabilities{Add: []corev1.Capability{"SYS_ADMIN"}}
		}), "spec.executor.template.spec.containers[0]", `"SYS_ADMIN"`},
		{"privilege escalation", securityContext(func(sc *corev1.SecurityContext) { sc.AllowPrivilegeEscalation = ptr.To(true) }),
			"spec.executor.template.spec.containers[0]", "allowPrivilegeEscalation"},
		{"no seccomp", func(s *corev1.PodSpec) {
			s.SecurityContext = &corev1.PodSecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined}}
		}, "spec.executor.template.spec", "seccompProfile"},
		{"a host port", container(func(c *corev1.Container) {
			c.Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: 80}}
		}), "spec.executor.template.spec.containers[0]", "hostPort"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmpl := valid()
			tc.mutate(&tmpl.Spec)
			errs := Apply(tmpl, grant, root)
			if len(errs) != 1 {
				t.Fatalf("%d refusals, want one: %v", len(errs), errs)
			}
			if errs[0].Field != tc.field || !strings.Contains(errs[0].Error(), tc.message) {
				t.Errorf("refusal %q, want field %s and %q", errs[0].Error(), tc.field, tc.message)
			}
		})
	}
}

// Without a named ServiceAccount, no API token reaches the Pod.
func TestApplyRefusesTokensOfTheDefaultAccount(t *testing.T) {
	g := grant
	g.ServiceAccountName = ""
	for _, tc := range []struct {
		name   string
		mutate func(*corev1.PodSpec)
		field  string
	}{
		{"automount", func(s *corev1.PodSpec) { s.AutomountServiceAccountToken = ptr.To(true) },
			"spec.executor.template.spec.automountServiceAccountToken"},
		{"a projected token", func(s *corev1.PodSpec) {
			s.Volumes = append(s.Volumes, corev1.Volume{Name: "token", VolumeSource: corev1.VolumeSource{
				Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
					{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}}}}}})
		}, "spec.executor.template.spec.volumes[1].projected.sources[0].serviceAccountToken"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmpl := valid()
			tc.mutate(&tmpl.Spec)
			errs := Apply(tmpl, g, root)
			if len(errs) != 1 || errs[0].Field != tc.field || !strings.Contains(errs[0].Detail, "no API token") {
				t.Errorf("refusals %v, want one of %s", errs, tc.field)
			}
		})
	}
}

// The run's key Secret is always usable, whatever the grant lists.
func TestApplyAllowsTheKeySecret(t *testing.T) {
	tmpl := valid()
	tmpl.Spec.Containers[0].Env[1].ValueFrom.SecretKeyRef.Name = "evaluation-api-key"
	if errs := Apply(tmpl, Grant{KeySecret: "evaluation-api-key"}, root); len(errs) > 0 {
		t.Errorf("the key Secret is refused: %v", errs)
	}
	tmpl = valid()
	errs := Apply(tmpl, Grant{KeySecret: "evaluation-api-key"}, root)
	if len(errs) != 1 || !strings.Contains(errs[0].Detail, "allow it in spec.executor.secrets of an EvaluationService "+
		"or ClusterEvaluationService (this run uses neither)") {
		t.Errorf("a Secret without a service to allow it: %v", errs)
	}
}

// The probe: every escape named, each by its field.
func TestApplyRefusesTheProbe(t *testing.T) {
	tmpl := valid()
	s := &tmpl.Spec
	s.ServiceAccountName, s.HostNetwork, s.HostPID, s.NodeName = "deployer", true, true, "node-1"
	s.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true), RunAsUser: ptr.To[int64](0)}
	s.Containers[0].Env = append(s.Containers[0].Env, corev1.EnvVar{Name: "DB", ValueFrom: &corev1.EnvVarSource{
		SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "db-password"}}}})
	s.Volumes = append(s.Volumes, corev1.Volume{Name: "host", VolumeSource: corev1.VolumeSource{
		HostPath: &corev1.HostPathVolumeSource{Path: "/"}}})
	errs := Apply(tmpl, grant, root)
	fields := make([]string, 0, len(errs))
	for _, e := range errs {
		fields = append(fields, e.Field)
	}
	want := []string{"serviceAccountName", "hostNetwork", "hostPID", "nodeName", "volumes[1].hostPath",
		"containers[0].env[3].valueFrom.secretKeyRef.name", "containers[0]"}
	for _, f := range want {
		if !strings.Contains(strings.Join(fields, " "), "spec.executor.template.spec."+f) {
			t.Errorf("refused fields %v, want %s among them", fields, f)
		}
	}
}

func TestCheckSize(t *testing.T) {
	tmpl := valid()
	if err := CheckSize(tmpl, root); err != nil {
		t.Errorf("an ordinary template: %v", err)
	}
	tmpl.Spec.Containers[0].Args = []string{strings.Repeat("x", MaxTemplateBytes)}
	err := CheckSize(tmpl, root)
	if err == nil || err.Field != "spec.executor.template" || !strings.Contains(err.Detail, "at most 32768") {
		t.Errorf("a 32 KiB argument: %v", err)
	}
}
