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

package convert

import (
	"encoding/json"
	"fmt"

	"k8s.io/utils/ptr"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi"
)

// SystemRequestFor is the upsert request for a System's spec.
func SystemRequestFor(s *v1alpha1.SystemSpec) evalapi.SystemRequest {
	return evalapi.SystemRequest{Name: string(s.Name), Description: string(ptr.Deref(s.Description, "")),
		Config: s.Config.Raw}
}

// SystemUpdateFor is the PATCH that gives remote System r the name and
// description s asks for; nil when it has them already. The config is not
// part of it: the service keeps a System's configs as its versions.
func SystemUpdateFor(r evalapi.System, s *v1alpha1.SystemSpec) *evalapi.SystemUpdate {
	name, description := string(s.Name), string(ptr.Deref(s.Description, ""))
	if r.Name == name && r.Description == description {
		return nil
	}
	return &evalapi.SystemUpdate{Name: &name, Description: &description}
}

// SetSystemStatus records what the service holds of System r in st.
func SetSystemStatus(st *v1alpha1.SystemStatus, r evalapi.System) {
	st.ID = r.ID
	st.ProductionVersionID = ""
	if r.ProductionVersion != nil {
		st.ProductionVersionID = r.ProductionVersion.ID
	}
}

// SystemVersionRequestFor is the upsert request for a SystemVersion's spec.
func SystemVersionRequestFor(s *v1alpha1.SystemVersionSpec) evalapi.SystemVersionRequest {
	return evalapi.SystemVersionRequest{Name: string(ptr.Deref(s.Name, "")), Config: s.Config.Raw}
}

// SetSystemVersionStatus records what the service holds of version v in st.
func SetSystemVersionStatus(st *v1alpha1.SystemVersionStatus, v evalapi.SystemVersion) {
	st.ID, st.SystemID, st.Name = v.ID, v.SystemID, v.Name
}

// SystemVersionResponseOf is a SystemVersion object as the service would
// answer it: its recorded ids, its name (spec's until the service named
// it) and its config.
func SystemVersionResponseOf(v *v1alpha1.SystemVersion) evalapi.SystemVersion {
	name := v.Status.Name
	if name == "" {
		name = string(ptr.Deref(v.Spec.Name, ""))
	}
	return evalapi.SystemVersion{ID: v.RecordedID(), SystemID: v.Status.SystemID, Name: name, Config: v.Spec.Config.Raw}
}

// CheckConfig says why raw is not a config the service takes: a JSON
// object of at most v1alpha1.SystemConfigMaxBytes. Nil when it is one.
func CheckConfig(raw []byte) error {
	if len(raw) > v1alpha1.SystemConfigMaxBytes {
		return fmt.Errorf("config is %d bytes as JSON, over the %d allowed", len(raw), v1alpha1.SystemConfigMaxBytes)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return fmt.Errorf("config must be a JSON object")
	}
	return nil
}
