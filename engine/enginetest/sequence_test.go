package enginetest

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCountingSequenceChecksOrder(t *testing.T) {
	c := NewCountingSequence(8)
	logits, err := c.Step(3, 0)
	require.NoError(t, err)
	assert.Equal(t, []float32{0, 0, 0, 0, 1, 0, 0, 0}, logits)
	_, err = c.Step(4, 2)
	assert.ErrorIs(t, err, ErrOutOfOrder, "position 1 was skipped")
	_, err = c.Step(4, 1)
	require.NoError(t, err)
	_, err = c.Step(5, 1)
	require.NoError(t, err, "a step below the positions held rewinds")
	c.Reset()
	_, err = c.Step(4, 1)
	assert.ErrorIs(t, err, ErrOutOfOrder, "a reset forgets the positions")
	_, err = WithPrefill(c).Prefill([]int32{1, 2, 3}, 1)
	assert.ErrorIs(t, err, ErrOutOfOrder)
	assert.Equal(t, []string{"step", "step", "step", "step", "reset", "step", "prefill"}, ops(c.Log))
}

func TestCountingSequenceFaults(t *testing.T) {
	c := NewCountingSequence(8)
	boom := errors.New("boom")
	c.FailNext = boom
	_, err := c.Step(0, 0)
	assert.ErrorIs(t, err, boom)
	logits, err := c.Step(0, 0)
	require.NoError(t, err, "faults are one-shot")
	assert.Len(t, logits, 8)
	c.EmptyNext = true
	logits, err = c.Step(0, 1)
	require.NoError(t, err)
	assert.Empty(t, logits)
}

func TestCountingSequenceNext(t *testing.T) {
	c := &CountingSequence{VocabSize: 4, Next: func(_ int32, pos int) int32 { return int32(pos % 2) }}
	logits, err := c.Step(3, 0)
	require.NoError(t, err)
	best, _ := Greedy{}.Sample(logits)
	assert.Equal(t, int32(0), best)
	logits, _ = c.Step(3, 1)
	best, _ = Greedy{}.Sample(logits)
	assert.Equal(t, int32(1), best)
	assert.Equal(t, 2, c.Count("step"))
}

func TestTemperature(t *testing.T) {
	logits := []float32{0, 1, 2, 3}
	draw := func(seed uint64) []int32 {
		s := &Temperature{T: 1}
		require.NoError(t, s.Reset(seed, nil))
		var out []int32
		for range 32 {
			id, err := s.Sample(logits)
			require.NoError(t, err)
			out = append(out, id)
		}
		return out
	}
	assert.Equal(t, draw(1), draw(1))
	assert.NotEqual(t, draw(1), draw(2))
	assert.Error(t, (&Temperature{}).Reset(1, nil), "T must be > 0")
	_, err := (&Temperature{T: 1}).Sample(logits)
	assert.Error(t, err, "Sample before Reset")
}

func ops(log []Call) []string {
	var out []string
	for _, c := range log {
		out = append(out, c.Op)
	}
	return out
}
