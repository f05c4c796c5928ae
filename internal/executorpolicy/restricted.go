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
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
	"k8s.io/utils/ptr"
)

// evaluator is Kubernetes' own Pod Security evaluator, with its checks.
var evaluator = func() policy.Evaluator {
	e, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		panic("the Pod Security checks do not load: " + err.Error())
	}
	return e
}()

// restricted is the profile executors are held to, at the latest version
// the evaluator knows.
var restricted = api.LevelVersion{Level: api.LevelRestricted, Version: api.LatestVersion()}

// fillRestricted sets what the restricted profile requires and spec leaves
// unset: runAsNonRoot and the RuntimeDefault seccomp profile for the Pod;
// allowPrivilegeEscalation false and capabilities dropped (ALL) for each
// container. An explicit value stays, for checkRestricted to judge. A
// Windows Pod has no seccomp profile or capabilities to set.
func fillRestricted(spec *corev1.PodSpec) {
	if spec.SecurityContext == nil {
		spec.SecurityContext = &corev1.PodSecurityContext{}
	}
	sc := spec.SecurityContext
	if sc.RunAsNonRoot == nil {
		sc.RunAsNonRoot = ptr.To(true)
	}
	if spec.OS != nil && spec.OS.Name == corev1.Windows {
		return
	}
	if sc.SeccompProfile == nil {
		sc.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}
	}
	for _, group := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for i := range group {
			fillContainer(&group[i])
		}
	}
}

// fillContainer sets c's allowPrivilegeEscalation (false) and adds ALL to
// the capabilities it drops, where it leaves them unset.
func fillContainer(c *corev1.Container) {
	if c.SecurityContext == nil {
		c.SecurityContext = &corev1.SecurityContext{}
	}
	sc := c.SecurityContext
	if sc.AllowPrivilegeEscalation == nil {
		sc.AllowPrivilegeEscalation = ptr.To(false)
	}
	if sc.Capabilities == nil {
		sc.Capabilities = &corev1.Capabilities{}
	}
	if !slices.Contains(sc.Capabilities.Drop, "ALL") {
		sc.Capabilities.Drop = append(sc.Capabilities.Drop, "ALL")
	}
}

// checkRestricted refuses what the restricted profile forbids in tmpl,
// naming the container at fault, or the Pod. The host namespaces and the
// volumes checkPlacement and checkVolumes refuse, with their own fields,
// are left out here so that nothing is refused twice.
func checkRestricted(tmpl *corev1.PodTemplateSpec, path *field.Path) field.ErrorList {
	pod := tmpl.Spec
	pod.HostNetwork, pod.HostPID, pod.HostIPC = false, false, false
	pod.Volumes = slices.DeleteFunc(slices.Clone(pod.Volumes), func(v corev1.Volume) bool {
		return !slices.Contains(allowedVolumes, volumeType(v.VolumeSource))
	})
	pod.InitContainers, pod.Containers = nil, nil
	whole := forbidden(&tmpl.ObjectMeta, &pod)
	var errs field.ErrorList
	for _, reason := range whole {
		errs = append(errs, field.Forbidden(path, reason))
	}
	for _, group := range []struct {
		name       string
		containers []corev1.Container
	}{{"initContainers", tmpl.Spec.InitContainers}, {"containers", tmpl.Spec.Containers}} {
		for i, c := range group.containers {
			one := pod
			if group.name == "initContainers" {
				one.InitContainers = []corev1.Container{c}
			} else {
				one.Containers = []corev1.Container{c}
			}
			for _, reason := range forbidden(&tmpl.ObjectMeta, &one) {
				if !slices.Contains(whole, reason) {
					errs = append(errs, field.Forbidden(path.Child(group.name).Index(i), reason))
				}
			}
		}
	}
	return errs
}

// forbidden is what the restricted profile forbids in a Pod, each as
// "the restricted Pod Security profile forbids <reason> (<detail>)".
func forbidden(meta *metav1.ObjectMeta, spec *corev1.PodSpec) []string {
	var out []string
	for _, r := range evaluator.EvaluatePod(restricted, meta, spec) {
		if r.Allowed {
			continue
		}
		msg := "the restricted Pod Security profile forbids " + r.ForbiddenReason
		if r.ForbiddenDetail != "" {
			msg += " (" + r.ForbiddenDetail + ")"
		}
		out = append(out, msg)
	}
	return out
}
