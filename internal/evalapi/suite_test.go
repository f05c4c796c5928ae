package evalapi_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestEvalAPI(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "evalapi")
}
