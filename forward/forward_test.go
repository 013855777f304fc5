package forward_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/engine/enginetest"
	"github.com/realizar-host/realizar-host/forward"
)

const testVocab = 32

// steps returns the positions of the recorded step calls, with -1 for a reset.
func steps(log []enginetest.Call) []int {
	var out []int
	for _, c := range log {
		switch c.Op {
		case "reset":
			out = append(out, -1)
		case "step":
			out = append(out, c.Pos)
		}
	}
	return out
}

func TestQ4kForwardResumeOrReplay(t *testing.T) {
	tests := []struct {
		name   string
		before [][2]int // (len, start) forwards run first
		len    int
		start  int
		want   []int // step positions of the last call, -1 = reset
	}{
		{"from zero resets", nil, 3, 0, []int{-1, 0, 1, 2}},
		{"resume at exactly held", [][2]int{{3, 0}}, 4, 3, []int{3}},
		{"resume a span at held", [][2]int{{3, 0}}, 5, 3, []int{3, 4}},
		{"start below held rewinds", [][2]int{{3, 0}}, 4, 2, []int{2, 3}},
		{"start above held replays", [][2]int{{3, 0}}, 6, 4, []int{-1, 0, 1, 2, 3, 4, 5}},
		{"start 0 with state held replays", [][2]int{{3, 0}}, 3, 0, []int{-1, 0, 1, 2}},
		{"nothing held, start > 0 replays", nil, 4, 3, []int{-1, 0, 1, 2, 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			step := enginetest.NewCountingSequence(testVocab)
			f := enginetest.NewSequenceForward(t, step, 64)
			tokens := enginetest.Tokens(1, 8)
			for _, b := range tt.before {
				_, err := f.Forward(tokens[:b[0]], b[1])
				require.NoError(t, err)
			}
			step.Log = nil
			logits, err := f.Forward(tokens[:tt.len], tt.start)
			require.NoError(t, err)
			assert.Equal(t, tt.want, steps(step.Log))
			assert.Equal(t, tt.len, f.Held())
			require.Len(t, logits, testVocab)
			assert.Equal(t, float32(1), logits[tokens[tt.len-1]+1], "logits after the last token")
		})
	}
}

func TestQ4kForwardFailures(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name    string
		fault   func(*enginetest.CountingSequence)
		wantErr error
	}{
		{"failed step", func(s *enginetest.CountingSequence) { s.FailNext = boom }, boom},
		{"empty logits", func(s *enginetest.CountingSequence) { s.EmptyNext = true }, forward.ErrBadLogits},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			step := enginetest.NewCountingSequence(testVocab)
			f := enginetest.NewSequenceForward(t, step, 64)
			tokens := enginetest.Tokens(1, 6)
			_, err := f.Forward(tokens[:3], 0)
			require.NoError(t, err)

			tt.fault(step)
			_, err = f.Forward(tokens[:4], 3)
			require.ErrorIs(t, err, tt.wantErr)
			assert.Zero(t, f.Held(), "a failure forgets the state")

			step.Log = nil
			_, err = f.Forward(tokens[:5], 4)
			require.NoError(t, err)
			assert.Equal(t, []int{-1, 0, 1, 2, 3, 4}, steps(step.Log), "the next forward replays from 0")
		})
	}
}

func TestQ4kForwardPrefill(t *testing.T) {
	step := enginetest.NewCountingSequence(testVocab)
	f := enginetest.NewSequenceForward(t, enginetest.WithPrefill(step), 64)
	tokens := enginetest.Tokens(1, 8)
	calls := []struct {
		len, start  int
		wantOps     []string
		wantBatched int
	}{
		{3, 0, []string{"reset", "prefill"}, 1},
		{4, 3, []string{"step"}, 1}, // one token: no batched pass
		{6, 4, []string{"prefill"}, 2},
		{7, 2, []string{"prefill"}, 3},          // a rewind to 2 is batched too
		{7, 0, []string{"reset", "prefill"}, 4}, // and a replay from 0
	}
	for _, c := range calls {
		step.Log = nil
		logits, err := f.Forward(tokens[:c.len], c.start)
		require.NoError(t, err)
		var ops []string
		for _, call := range step.Log {
			ops = append(ops, call.Op)
		}
		assert.Equal(t, c.wantOps, ops, "Forward(%d, %d)", c.len, c.start)
		assert.Equal(t, c.wantBatched, f.BatchedPrefills())
		assert.Equal(t, float32(1), logits[tokens[c.len-1]+1])
	}

	step.FailNext = errors.New("prefill failed")
	_, err := f.Forward(tokens[:8], 7-2)
	require.Error(t, err)
	assert.Zero(t, f.Held())
	assert.Equal(t, 4, f.BatchedPrefills(), "a failed prefill is not counted")
}

func TestQ4kForwardRefusals(t *testing.T) {
	f := enginetest.NewSequenceForward(t, enginetest.NewCountingSequence(testVocab), 4)
	tokens := enginetest.Tokens(1, 5)
	_, err := f.Forward(tokens, 0)
	assert.ErrorIs(t, err, forward.ErrContextExceeded)
	_, err = f.Forward(tokens[:2], 2)
	assert.Error(t, err, "nothing to process")
	_, err = f.Forward(nil, 0)
	assert.Error(t, err)
	_, err = f.Forward(tokens[:2], -1)
	assert.Error(t, err)
	_, err = f.Reserve(5)
	assert.ErrorIs(t, err, forward.ErrContextExceeded)
}

func TestQ4kForwardOptions(t *testing.T) {
	step := enginetest.NewCountingSequence(testVocab)
	tests := []struct {
		name    string
		seq     forward.Sequence
		opts    forward.Options
		wantCtx int
		wantErr bool
	}{
		{"model context", step, forward.Options{ModelContext: 512}, 512, false},
		{"capped by --ctx-size", step, forward.Options{ModelContext: 512, MaxContext: 128}, 128, false},
		{"cap above the model is no cap", step, forward.Options{ModelContext: 512, MaxContext: 4096}, 512, false},
		{"no model context", step, forward.Options{}, 0, true},
		{"negative cap", step, forward.Options{ModelContext: 512, MaxContext: -1}, 0, true},
		{"nil step", nil, forward.Options{ModelContext: 512}, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := forward.NewSequenceForward(tt.seq, tt.opts)
			if tt.wantErr {
				assert.ErrorIs(t, err, forward.ErrBadOptions)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantCtx, f.ContextLength())
		})
	}
}

func TestQ4kForwardBackendAndNotices(t *testing.T) {
	step := enginetest.NewCountingSequence(testVocab)
	step.BackendName, step.GPU = "cuda", true
	f := enginetest.NewSequenceForward(t, step, 64)
	assert.Equal(t, enginetest.Arch, f.Arch())
	assert.True(t, f.OnGPU())
	assert.Equal(t, []string{"Backend: cuda"}, f.Notices())

	step.BackendName, step.GPU = "cpu", false // the step fell back
	f.AddNotice("Fallback: cuda → cpu: out of memory")
	assert.False(t, f.OnGPU())
	assert.Equal(t, []string{"Backend: cuda", "Fallback: cuda → cpu: out of memory"}, f.Notices())

	bare := enginetest.NewSequenceForward(t, enginetest.Bare(step), 64)
	assert.Equal(t, []string{"Backend: unknown"}, bare.Notices())
	assert.False(t, bare.OnGPU())
}

func TestQ4kForwardReserve(t *testing.T) {
	step := enginetest.NewCountingSequence(testVocab)
	f := enginetest.NewSequenceForward(t, step, 64)
	tokens := enginetest.Tokens(1, 8)

	dropped, err := f.Reserve(8)
	require.NoError(t, err)
	assert.True(t, dropped, "growing the cache drops the state")
	_, err = f.Forward(tokens[:3], 0)
	require.NoError(t, err)

	dropped, err = f.Reserve(8)
	require.NoError(t, err)
	assert.False(t, dropped)
	assert.Equal(t, 3, f.Held())

	dropped, err = f.Reserve(16)
	require.NoError(t, err)
	assert.True(t, dropped)
	assert.Zero(t, f.Held(), "a dropped reserve forgets the state")

	bare := enginetest.NewSequenceForward(t, enginetest.Bare(step), 64)
	dropped, err = bare.Reserve(64)
	require.NoError(t, err)
	assert.False(t, dropped, "without Reserver nothing is dropped")
}
