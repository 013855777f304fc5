package q4k_test

import (
	"testing"

	"github.com/realizar-host/realizar-host/q4k"
	"github.com/realizar-host/realizar-host/q4k/q4ktest"
)

func TestFastKernels(t *testing.T) {
	t.Logf("fast kernels: %s", q4k.Fast.Name)
	q4ktest.TestKernels(t, q4k.Fast)
}

func TestReferenceKernelsAgainstThemselves(t *testing.T) {
	q4ktest.TestKernels(t, q4k.Reference)
}
