package engine_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/forward"
)

const testVocab = 32

func newSequenceForward(t *testing.T, step forward.Sequence, ctx int) *forward.SequenceForward {
	t.Helper()
	f, err := forward.NewSequenceForward(step, forward.Options{Arch: "llama", ModelContext: ctx})
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
