package q4k_test

import (
	"testing"

	"github.com/realizar-host/realizar-host/q4k"
	"github.com/realizar-host/realizar-host/q4k/q4ktest"
	"github.com/stretchr/testify/require"
)

func TestFastKernels(t *testing.T) {
	t.Logf("fast kernels: %s", q4k.Fast().Name)
	q4ktest.TestKernels(t, q4k.Fast())
}

// Every implementation this CPU can run (the AVX2 path too where Fast is
// the AVX-512 VNNI one) against the reference, bit for bit.
func TestImplementations(t *testing.T) {
	impls := q4k.Implementations()
	require.Equal(t, q4k.Fast().Name, impls[0].Name)
	require.Equal(t, q4k.Reference().Name, impls[len(impls)-1].Name)
	for _, impl := range impls[:len(impls)-1] {
		t.Run(impl.Name, func(t *testing.T) { q4ktest.TestKernels(t, impl) })
	}
}

func TestReferenceKernelsAgainstThemselves(t *testing.T) {
	q4ktest.TestKernels(t, q4k.Reference())
}
