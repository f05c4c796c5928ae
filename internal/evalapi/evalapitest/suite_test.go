package evalapitest_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestEvalAPITest(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "evalapitest")
}
