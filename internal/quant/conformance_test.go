package quant_test

import (
	"testing"

	"github.com/realizar-host/realizar-host/internal/quant"
	"github.com/realizar-host/realizar-host/internal/quant/quanttest"
	"github.com/stretchr/testify/require"
)

func TestFastKernels(t *testing.T) {
	t.Logf("fast kernels: %s", quant.Fast().Name)
	quanttest.TestKernels(t, quant.Fast())
}

// Every implementation this CPU can run (the AVX2 path too where Fast is
// the AVX-512 VNNI one) against the reference, bit for bit.
func TestImplementations(t *testing.T) {
	impls := quant.Implementations()
	require.Equal(t, quant.Fast().Name, impls[0].Name)
	require.Equal(t, quant.Reference().Name, impls[len(impls)-1].Name)
	for _, impl := range impls[:len(impls)-1] {
		t.Run(impl.Name, func(t *testing.T) { quanttest.TestKernels(t, impl) })
	}
}

func TestReferenceKernelsAgainstThemselves(t *testing.T) {
	quanttest.TestKernels(t, quant.Reference())
}
