package engine_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/forward"
)

const testVocab = 32

func newStepForward(t *testing.T, step forward.TokenStep, ctx int) *forward.StepForward {
	t.Helper()
	f, err := forward.NewStepForward(step, forward.StepOptions{Arch: "llama", ModelContext: ctx})
	require.NoError(t, err)
	return f
}

func seq(from, n int) []int32 {
	s := make([]int32, n)
	for i := range s {
		s[i] = int32(from + i)
	}
	return s
}
