package engine_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/engine"
	"github.com/realizar-host/realizar-host/engine/enginetest"
	"github.com/realizar-host/realizar-host/forward"
)

func TestScore(t *testing.T) {
	r := newRig(t, 64, nil)
	tokens := []int32{5, 6, 9, 10}
	var seen []int
	var nll float64
	err := r.s.Score(tokens, func(i int, logits []float32) error {
		seen = append(seen, i)
		best, _ := enginetest.Greedy{}.Sample(logits)
		assert.Equal(t, tokens[i]+1, best, "logits after tokens[0..%d]", i)
		if i+1 < len(tokens) {
			nll -= engine.LogSoftmaxAt(logits, tokens[i+1])
		}
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, []int{0, 1, 2, 3}, seen)
	assert.Equal(t, forwards(1, 0, 2, 1, 3, 2, 4, 3), r.rec.Forwards)
	assert.Equal(t, []int{4}, r.rec.Reserves)
	assert.Greater(t, nll, 0.0)

	// What Score leaves held is reused by a turn that extends it.
	r.rec.Reset()
	r.seq.Capacity = 64
	turn, err := r.s.Generate(append(tokens, 11), engine.GenerateConfig{MaxTokens: 1})
	require.NoError(t, err)
	assert.Equal(t, 4, turn.Reused)
}

func TestScoreErrors(t *testing.T) {
	stop := errors.New("stop scoring")
	boom := errors.New("device lost")
	tests := []struct {
		name     string
		tokens   []int32
		onLogits func(int, []float32) error
		fault    error
		want     error
	}{
		{"empty", nil, func(int, []float32) error { return nil }, nil, engine.ErrEmptyPrompt},
		{"bad id", []int32{1, testVocab}, func(int, []float32) error { return nil }, nil, forward.ErrBadToken},
		{"longer than the context", enginetest.Tokens(0, 9), func(int, []float32) error { return nil }, nil, forward.ErrContextExceeded},
		{"no callback", []int32{1}, nil, nil, engine.ErrBadConfig},
		{"callback error stops", enginetest.Tokens(0, 4), func(i int, _ []float32) error {
			if i == 1 {
				return stop
			}
			return nil
		}, nil, stop},
		{"forward error", enginetest.Tokens(0, 4), func(int, []float32) error { return nil }, boom, boom},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, 8, nil)
			r.seq.FailNext = tt.fault
			err := r.s.Score(tt.tokens, tt.onLogits)
			assert.ErrorIs(t, err, tt.want)
		})
	}

	// A full context scores: every position is held.
	r := newRig(t, 8, nil)
	require.NoError(t, r.s.Score(enginetest.Tokens(0, 8), func(int, []float32) error { return nil }))
}
