package enginetest

import (
	"testing"

	"github.com/realizar-host/realizar-host/forward"
)

// Arch is the architecture a NewSequenceForward reports: the counting
// model's, no registered one (the forward only reports the name).
const Arch = "counting"

// NewSequenceForward wraps seq as a forward of architecture Arch with a
// model context of ctx positions, failing t on an error.
func NewSequenceForward(t testing.TB, seq forward.Sequence, ctx int) *forward.SequenceForward {
	t.Helper()
	f, err := forward.NewSequenceForward(seq, forward.Options{Arch: Arch, ModelContext: ctx})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// Tokens is the n token ids from, from+1, …, from+n-1.
func Tokens(from, n int) []int32 {
	s := make([]int32, n)
	for i := range s {
		s[i] = int32(from + i)
	}
	return s
}
