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

// Package executorpolicy holds an EvaluationRun's executor template to
// what its creator may be given: Pods that run as the ServiceAccount the
// run's service names, read only the Secrets it allows, and meet the
// restricted Pod Security profile. Creating an EvaluationRun must never let
// its creator do what the creator could not do directly; the operator
// creates the Job with its own rights, so it checks the template first.
// The package is pure: a template and a grant in, the template the Job
// runs or the refused fields out.
package executorpolicy

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/eval-operator/eval-operator/internal/quote"
)

// MaxTemplateBytes bounds a template's JSON: an executor's Pod is a few
// containers, their commands and environment; more is refused.
const MaxTemplateBytes = 32 << 10

// DefaultServiceAccount is the ServiceAccount executors run as when their
// service names none: every namespace has it. They get no API token.
const DefaultServiceAccount = "default"

// Grant is what an executor's Pods may run as and read.
type Grant struct {
	// ServiceAccountName is the account the Pods run as; "" runs them as
	// DefaultServiceAccount without an API token.
	ServiceAccountName string
	// Secrets are the Secrets the template may reference.
	Secrets []string
	// KeySecret holds the run's key: always allowed.
	KeySecret string
	// Source names the service object the grant comes from, for messages,
	// e.g. "EvaluationService/default"; "" when the run uses none (the
	// manager's flags), which grants nothing but the defaults.
	Source string
}

// where names setting of the grant's source, for messages.
func (g Grant) where(setting string) string {
	if g.Source == "" {
		return setting + " of an EvaluationService or ClusterEvaluationService (this run uses neither)"
	}
	return setting + " of " + g.Source
}

// account is the ServiceAccount the Pods run as.
func (g Grant) account() string {
	if g.ServiceAccountName == "" {
		return DefaultServiceAccount
	}
	return g.ServiceAccountName
}

// allows reports whether the template may reference Secret name.
func (g Grant) allows(name string) bool {
	return name == g.KeySecret || slices.Contains(g.Secrets, name)
}

// CheckSize refuses a template over MaxTemplateBytes of JSON.
func CheckSize(tmpl *corev1.PodTemplateSpec, path *field.Path) *field.Error {
	raw, err := json.Marshal(tmpl)
	switch {
	case err != nil:
		return field.InternalError(path, fmt.Errorf("measuring the template: %w", err))
	case len(raw) > MaxTemplateBytes:
		return field.Forbidden(path, fmt.Sprintf("the template is %d bytes of JSON; an executor's may have at most %d",
			len(raw), MaxTemplateBytes))
	}
	return nil
}

// Apply makes tmpl the Pod template an executor runs, or says why it may
// not: each refused field, under path (the template's own path, e.g.
// spec.executor.template). On success tmpl runs as g's account, with the
// restricted profile's settings it left unset filled in; on a refusal tmpl
// is left half-changed and must not be used.
func Apply(tmpl *corev1.PodTemplateSpec, g Grant, path *field.Path) field.ErrorList {
	spec := &tmpl.Spec
	specPath := path.Child("spec")
	errs := checkIdentity(spec, g, specPath)
	errs = append(errs, checkPlacement(spec, specPath)...)
	errs = append(errs, checkVolumes(spec, g, specPath)...)
	errs = append(errs, checkSecretRefs(spec, g, specPath)...)
	spec.ServiceAccountName, spec.DeprecatedServiceAccount = g.account(), ""
	if g.ServiceAccountName == "" {
		spec.AutomountServiceAccountToken = ptr.To(false)
	}
	fillRestricted(spec)
	return append(errs, checkRestricted(tmpl, specPath)...)
}

// checkIdentity refuses another ServiceAccount than g's, and an API token
// for the namespace's default account.
func checkIdentity(spec *corev1.PodSpec, g Grant, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	why := fmt.Sprintf("executors run as ServiceAccount %q, which %s names; leave this empty", g.account(),
		g.where("spec.executor.serviceAccountName"))
	if g.ServiceAccountName == "" {
		why = fmt.Sprintf("executors run as the namespace's %q ServiceAccount, without an API token, unless %s names "+
			"another; leave this empty", DefaultServiceAccount, g.where("spec.executor.serviceAccountName"))
	}
	for _, f := range []struct{ name, value string }{
		{"serviceAccountName", spec.ServiceAccountName}, {"serviceAccount", spec.DeprecatedServiceAccount},
	} {
		if f.value != "" && f.value != g.account() {
			errs = append(errs, field.Forbidden(path.Child(f.name), why))
		}
	}
	if g.ServiceAccountName == "" && ptr.Deref(spec.AutomountServiceAccountToken, false) {
		errs = append(errs, field.Forbidden(path.Child("automountServiceAccountToken"), noToken(g)))
	}
	return errs
}

// noToken says why a Pod of the default ServiceAccount gets no token.
func noToken(g Grant) string {
	return "executors get no API token unless " + g.where("spec.executor.serviceAccountName") +
		" names their ServiceAccount"
}

// checkPlacement refuses what would put the Pod beside the node's own
// processes or past the scheduler.
func checkPlacement(spec *corev1.PodSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"hostNetwork", spec.HostNetwork}, {"hostPID", spec.HostPID}, {"hostIPC", spec.HostIPC},
	} {
		if f.set {
			errs = append(errs, field.Forbidden(path.Child(f.name), "an executor may not share the node's namespaces"))
		}
	}
	if spec.NodeName != "" {
		errs = append(errs, field.Forbidden(path.Child("nodeName"),
			"the scheduler places executors; nodeName would bypass it"))
	}
	return errs
}

// allowedVolumes are the volume types an executor may use: none of them
// reaches the node, another workload's data or a Secret unchecked.
var allowedVolumes = []string{"emptyDir", "configMap", "secret", "downwardAPI", "projected", "ephemeral"}

// checkVolumes refuses volume types outside allowedVolumes, and projected
// sources that would mint credentials the grant does not give.
func checkVolumes(spec *corev1.PodSpec, g Grant, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, v := range spec.Volumes {
		vp := path.Child("volumes").Index(i)
		kind := volumeType(v.VolumeSource)
		if !slices.Contains(allowedVolumes, kind) {
			errs = append(errs, field.Forbidden(vp.Child(kind), fmt.Sprintf("volume %s is of type %s; an executor "+
				"may use only %s volumes", quote.Prefix(v.Name), kind, strings.Join(allowedVolumes, ", "))))
			continue
		}
		if v.Projected == nil {
			continue
		}
		for j, s := range v.Projected.Sources {
			sp := vp.Child("projected", "sources").Index(j)
			switch {
			case s.ServiceAccountToken != nil && g.ServiceAccountName == "":
				errs = append(errs, field.Forbidden(sp.Child("serviceAccountToken"), noToken(g)))
			case s.PodCertificate != nil:
				errs = append(errs, field.Forbidden(sp.Child("podCertificate"),
					"an executor may not request certificates from a signer"))
			}
		}
	}
	return errs
}

// volumeType is the JSON name of the one source a volume sets ("" for none).
func volumeType(src corev1.VolumeSource) string {
	v := reflect.ValueOf(src)
	for i := range v.NumField() {
		if f := v.Field(i); f.Kind() == reflect.Pointer && !f.IsNil() {
			name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
			return name
		}
	}
	return ""
}

// secretRef is one reference of a template to a Secret.
type secretRef struct {
	path *field.Path
	name string
}

// checkSecretRefs refuses every reference to a Secret g does not allow.
func checkSecretRefs(spec *corev1.PodSpec, g Grant, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, r := range secretRefs(spec, path) {
		if g.allows(r.name) {
			continue
		}
		errs = append(errs, field.Forbidden(r.path, fmt.Sprintf("Secret %s is not one an executor may use: allow it "+
			"in %s (the run's key Secret %q always is)", quote.Prefix(r.name), g.where("spec.executor.secrets"), g.KeySecret)))
	}
	return errs
}

// secretRefs lists the template's references to Secrets: its containers'
// env and envFrom, its secret and projected volumes, its imagePullSecrets.
func secretRefs(spec *corev1.PodSpec, path *field.Path) []secretRef {
	var refs []secretRef
	for _, group := range []struct {
		name       string
		containers []corev1.Container
	}{{"initContainers", spec.InitContainers}, {"containers", spec.Containers}} {
		for i, c := range group.containers {
			cp := path.Child(group.name).Index(i)
			for j, e := range c.Env {
				if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
					refs = append(refs, secretRef{cp.Child("env").Index(j).Child("valueFrom", "secretKeyRef", "name"),
						e.ValueFrom.SecretKeyRef.Name})
				}
			}
			for j, e := range c.EnvFrom {
				if e.SecretRef != nil {
					refs = append(refs, secretRef{cp.Child("envFrom").Index(j).Child("secretRef", "name"), e.SecretRef.Name})
				}
			}
		}
	}
	for i, v := range spec.Volumes {
		vp := path.Child("volumes").Index(i)
		if v.Secret != nil {
			refs = append(refs, secretRef{vp.Child("secret", "secretName"), v.Secret.SecretName})
		}
		if v.Projected == nil {
			continue
		}
		for j, s := range v.Projected.Sources {
			if s.Secret != nil {
				refs = append(refs, secretRef{vp.Child("projected", "sources").Index(j).Child("secret", "name"), s.Secret.Name})
			}
		}
	}
	for i, s := range spec.ImagePullSecrets {
		refs = append(refs, secretRef{path.Child("imagePullSecrets").Index(i).Child("name"), s.Name})
	}
	return refs
}
