package evalapi

import "github.com/eval-operator/eval-operator/api/v1alpha1"

// RequestFor is the create request for a Metric's spec: unset optional
// fields stay unset, so the service applies its own defaults.
func RequestFor(s *v1alpha1.MetricSpec) MetricRequest {
	return MetricRequest{
		Name:             s.Name,
		Description:      s.Description,
		EvalType:         string(s.EvalType),
		OutputType:       string(s.OutputType),
		Guidelines:       s.Guidelines,
		PromptTemplate:   s.PromptTemplate,
		EvalModelName:    s.EvalModelName,
		Temperature:      s.Temperature,
		PassingThreshold: s.PassingThreshold,
	}
}
