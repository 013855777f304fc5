package serving

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/realizar-host/realizar-host/forward"
	"github.com/stretchr/testify/require"
)

// A prompt's chunks are never one row, and never leave one row behind,
// while two or more are left and the pass has room: a pass of one row
// sums in the one-token order, two or more in the batch orders.
func TestPromptChunk(t *testing.T) {
	for _, tc := range []struct{ budget, left, room, want int }{
		{64, 25, 64, 25},
		{7, 25, 57, 7},
		{1, 25, 57, 2},
		{0, 25, 57, 2},
		{7, 8, 57, 6},
		{2, 3, 57, 3},
		{1, 2, 57, 2},
		{5, 1, 57, 1},
		{0, 1, 57, 1},
		{24, 25, 57, 23},
		{64, 25, 10, 10},
		{64, 11, 10, 9},
		{2, 3, 2, 2}, // no room for three: the last row goes alone
		{5, 25, 1, 1},
	} {
		got := promptChunk(tc.budget, tc.left, tc.room)
		require.Equal(t, tc.want, got, "budget %d, left %d, room %d", tc.budget, tc.left, tc.room)
		require.LessOrEqual(t, got, max(tc.room, 1))
		if tc.left >= 3 && tc.room >= 3 {
			require.GreaterOrEqual(t, got, 2)
			require.NotEqual(t, 1, tc.left-got)
		}
	}
}

// countSequence is a Sequence of vocab logits that counts nothing: the
// forward under test needs only shapes.
type countSequence struct{ logits []float32 }

func (s countSequence) Reset()                             {}
func (s countSequence) Step(int32, int) ([]float32, error) { return s.logits, nil }

// loneForward is an ArchForward that cannot join a batched pass.
type loneForward struct{ logits []float32 }

func (loneForward) OnGPU() bool                               { return false }
func (loneForward) ContextLength() int                        { return 16 }
func (loneForward) Reserve(int) (bool, error)                 { return false, nil }
func (f loneForward) Forward([]int32, int) ([]float32, error) { return f.logits, nil }

// A pass is reported to OnPass before its spans are answered, for a
// forward in the batched pass and for one alone: once a forward returns,
// its pass has been counted (bench --parallel sums a round's passes once
// its turns have ended).
func TestOnPassBeforeAnswer(t *testing.T) {
	var passes atomic.Int32
	b := newBatcher(NewMetrics(), 64, func(PassStats) {
		time.Sleep(5 * time.Millisecond) // a slow hook: an answer sent before it would be seen first
		passes.Add(1)
	})
	defer b.close()
	logits := make([]float32, 4)
	sf, err := forward.NewSequenceForward(countSequence{logits}, forward.Options{ModelContext: 16})
	require.NoError(t, err)
	want := int32(0)
	for name, sl := range map[string]*slot{"batched": {fwd: sf, seqFwd: sf}, "alone": {fwd: loneForward{logits}}} {
		q := b.join(context.Background(), sl)
		tokens := []int32{1, 2, 2, 3}
		for n := 2; n <= len(tokens); n++ {
			start := n - 1
			if n == 2 {
				start = 0 // the prompt
			}
			r := b.forward(q, tokens[:n], start, false)
			require.NoError(t, r.err)
			want++
			require.Equal(t, want, passes.Load(), "%s: the pass of the span ending at %d", name, n)
		}
		b.leave(q)
	}
}
