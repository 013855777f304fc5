package engine_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/engine"
	"github.com/realizar-host/realizar-host/engine/enginetest"
	"github.com/realizar-host/realizar-host/forward"
)

// rig is a Session over a counting step: after token t the greedy choice is
// t+1 (mod the vocabulary).
type rig struct {
	seq *enginetest.CountingSequence
	fwd *forward.SequenceForward
	rec *enginetest.Recorder
	s   *engine.Session
}

func newRig(t *testing.T, ctx int, vocab *enginetest.Vocab, opts ...engine.Option) *rig {
	t.Helper()
	if vocab == nil {
		vocab = enginetest.NewCountingVocab(testVocab)
	}
	r := &rig{seq: enginetest.NewCountingSequence(vocab.Size())}
	r.fwd = enginetest.NewSequenceForward(t, r.seq, ctx)
	r.rec = enginetest.NewRecorder(r.fwd)
	opts = append([]engine.Option{engine.WithSampler(enginetest.Greedy{})}, opts...)
	s, err := engine.NewSession(r.rec, vocab, opts...)
	require.NoError(t, err)
	r.s = s
	return r
}

// decodeForwards is the number of recorded forwards of one token.
func (r *rig) decodeForwards() int {
	n := 0
	for _, f := range r.rec.Forwards {
		if f.Len-f.Start == 1 && f.Start > 0 {
			n++
		}
	}
	return n
}

func seed(v uint64) *uint64 { return &v }

// forwards builds the expected Forward calls from (len, start) pairs.
func forwards(lenStart ...int) []enginetest.ForwardCall {
	var out []enginetest.ForwardCall
	for i := 0; i+1 < len(lenStart); i += 2 {
		out = append(out, enginetest.ForwardCall{Len: lenStart[i], Start: lenStart[i+1]})
	}
	return out
}

func TestGenerateForwardCalls(t *testing.T) {
	r := newRig(t, 64, nil)
	turn, err := r.s.Generate([]int32{1, 2, 3}, engine.GenerateConfig{MaxTokens: 3})
	require.NoError(t, err)
	assert.Equal(t, forwards(3, 0, 4, 3, 5, 4), r.rec.Forwards)
	assert.Equal(t, []int32{1, 2, 3, 4, 5, 6}, turn.Tokens)
	assert.Equal(t, []int32{4, 5, 6}, turn.GeneratedTokens())
	assert.Equal(t, 3, turn.Generated)
	assert.Equal(t, engine.StopMaxTokens, turn.Stop)
	assert.Equal(t, "4 5 6 ", string(turn.Text))
	assert.Equal(t, []int{6}, r.rec.Reserves, "Reserve(len(prompt)+budget) once")
	assert.Equal(t, 3, turn.Timings.PrefillTokens)
	assert.Equal(t, 2, turn.Timings.DecodeForwards)
}

func TestGenerateCancelWithPollBudget(t *testing.T) {
	prompt := []int32{1, 2, 3}
	full := newRig(t, 128, nil)
	want, err := full.s.Generate(prompt, engine.GenerateConfig{MaxTokens: 64})
	require.NoError(t, err)
	require.Equal(t, 64, want.Generated)
	assert.Equal(t, 63, full.decodeForwards())
	assert.Equal(t, 63, want.Timings.DecodeForwards)

	r := newRig(t, 128, nil)
	cancel := engine.NewCancelTokenAfter(8)
	var streamed []int32
	got, err := r.s.Generate(prompt, engine.GenerateConfig{MaxTokens: 64, Cancel: cancel,
		OnToken: func(id int32, _ []byte) error { streamed = append(streamed, id); return nil }})
	require.NoError(t, err)
	assert.Equal(t, engine.StopCancelled, got.Stop)
	assert.ErrorIs(t, got.Cause, engine.ErrCancelled)
	assert.Equal(t, 8, got.Generated)
	assert.Equal(t, 8, r.decodeForwards())
	assert.Equal(t, 9, cancel.Polls())
	assert.Equal(t, want.Tokens[:len(prompt)+8], got.Tokens, "a prefix of the uncancelled run")
	assert.Equal(t, got.GeneratedTokens(), streamed)
	assert.Equal(t, string(want.Text[:len(got.Text)]), string(got.Text))
}

func TestGenerateAlreadyCancelled(t *testing.T) {
	r := newRig(t, 64, nil)
	cancel := engine.NewCancelToken()
	cancel.Cancel()
	calls := 0
	turn, err := r.s.Generate([]int32{1, 2, 3}, engine.GenerateConfig{MaxTokens: 8, Cancel: cancel,
		OnToken: func(int32, []byte) error { calls++; return nil }})
	require.NoError(t, err)
	assert.Equal(t, engine.StopCancelled, turn.Stop)
	assert.Zero(t, turn.Generated)
	assert.Zero(t, calls, "nothing emitted")
	assert.Empty(t, r.rec.Forwards, "no forward at all")
	assert.Empty(t, turn.Text)
}

func TestGeneratePrefixReuse(t *testing.T) {
	tests := []struct {
		name      string
		next      func(first engine.Turn) []int32
		wantFirst enginetest.ForwardCall
		reused    int
	}{
		{"extension reuses what is held", func(f engine.Turn) []int32 { return append(f.Tokens, 20) },
			enginetest.ForwardCall{Len: 7, Start: 5}, 5},
		{"a diverging prompt reuses the common prefix", func(f engine.Turn) []int32 { return []int32{1, 2, 9, 10} },
			enginetest.ForwardCall{Len: 4, Start: 2}, 2},
		{"the held tokens exactly forward the last again", func(f engine.Turn) []int32 { return f.Tokens[:5] },
			enginetest.ForwardCall{Len: 5, Start: 4}, 4},
		{"a prefix of the held tokens rewinds", func(f engine.Turn) []int32 { return f.Tokens[:2] },
			enginetest.ForwardCall{Len: 2, Start: 1}, 1},
		{"a different first token starts from 0", func(f engine.Turn) []int32 { return []int32{7, 2, 3} },
			enginetest.ForwardCall{Len: 3, Start: 0}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, 64, nil)
			r.seq.Capacity = 64 // no reserve drops here
			first, err := r.s.Generate([]int32{1, 2, 3}, engine.GenerateConfig{MaxTokens: 3})
			require.NoError(t, err)
			r.rec.Reset()
			turn, err := r.s.Generate(tt.next(first), engine.GenerateConfig{MaxTokens: 2})
			require.NoError(t, err, "the counting step refuses a wrong resume")
			assert.Equal(t, tt.wantFirst, r.rec.Forwards[0])
			assert.Equal(t, tt.reused, turn.Reused)
			assert.Equal(t, tt.wantFirst.Len-tt.reused, turn.Timings.PrefillTokens)
		})
	}
}

func TestGenerateDroppedReserveIsNotReused(t *testing.T) {
	r := newRig(t, 64, nil) // Capacity 0: the first reserve grows (and drops)
	first, err := r.s.Generate([]int32{1, 2, 3}, engine.GenerateConfig{MaxTokens: 3})
	require.NoError(t, err)
	r.rec.Reset()
	// Reserve(7+8) grows the cache beyond 6 positions: the state is dropped.
	turn, err := r.s.Generate(append(first.Tokens, 20), engine.GenerateConfig{MaxTokens: 8})
	require.NoError(t, err)
	assert.Equal(t, []int{15}, r.rec.Reserves)
	assert.Equal(t, enginetest.ForwardCall{Len: 7, Start: 0}, r.rec.Forwards[0])
	assert.Zero(t, turn.Reused)
}

func TestGenerateFailedForwardReplays(t *testing.T) {
	r := newRig(t, 64, nil)
	r.seq.Capacity = 64
	first, err := r.s.Generate([]int32{1, 2, 3}, engine.GenerateConfig{MaxTokens: 3})
	require.NoError(t, err)

	boom := errors.New("device lost")
	r.seq.FailNext = boom
	failed, err := r.s.Generate(append(first.Tokens, 20), engine.GenerateConfig{MaxTokens: 3})
	require.ErrorIs(t, err, boom)
	assert.Equal(t, engine.StopNone, failed.Stop)

	r.rec.Reset()
	turn, err := r.s.Generate(append(first.Tokens, 20), engine.GenerateConfig{MaxTokens: 3})
	require.NoError(t, err)
	assert.Equal(t, enginetest.ForwardCall{Len: 7, Start: 0}, r.rec.Forwards[0])
	assert.Zero(t, turn.Reused)
}

func TestGenerateFailedDecodeForwardReplays(t *testing.T) {
	r := newRig(t, 64, nil)
	r.seq.Capacity = 64
	boom := errors.New("device lost")
	fails := 0
	turn, err := r.s.Generate([]int32{1, 2, 3}, engine.GenerateConfig{MaxTokens: 5,
		OnToken: func(id int32, _ []byte) error {
			if id == 5 && fails == 0 {
				r.seq.FailNext, fails = boom, 1 // the forward of token 5 fails
			}
			return nil
		}})
	require.ErrorIs(t, err, boom)
	assert.Equal(t, []int32{1, 2, 3, 4, 5}, turn.Tokens, "the turn so far")
	assert.Equal(t, "4 5 ", string(turn.Text))

	r.rec.Reset()
	_, err = r.s.Generate(turn.Tokens, engine.GenerateConfig{MaxTokens: 1})
	require.NoError(t, err)
	assert.Equal(t, enginetest.ForwardCall{Len: 5, Start: 0}, r.rec.Forwards[0])
}

func TestGenerateRefusals(t *testing.T) {
	ok := engine.GenerateConfig{MaxTokens: 4}
	tests := []struct {
		name    string
		prompt  []int32
		cfg     engine.GenerateConfig
		sampler bool
		want    []error
	}{
		{"MaxTokens 0", []int32{1}, engine.GenerateConfig{}, true, []error{engine.ErrBadConfig}},
		{"MaxTokens negative", []int32{1}, engine.GenerateConfig{MaxTokens: -1}, true, []error{engine.ErrBadConfig}},
		{"negative TopLogprobs", []int32{1}, engine.GenerateConfig{MaxTokens: 1, TopLogprobs: -1}, true, []error{engine.ErrBadConfig}},
		{"TopLogprobs beyond the vocabulary", []int32{1}, engine.GenerateConfig{MaxTokens: 1, TopLogprobs: testVocab + 1}, true, []error{engine.ErrBadConfig}},
		{"stop token outside the vocabulary", []int32{1}, engine.GenerateConfig{MaxTokens: 1, StopTokens: []int32{testVocab}}, true,
			[]error{engine.ErrBadConfig, forward.ErrBadToken}},
		{"no sampler", []int32{1}, ok, false, []error{engine.ErrBadConfig}},
		{"empty prompt", nil, ok, true, []error{engine.ErrEmptyPrompt}},
		{"prompt id outside the vocabulary", []int32{1, testVocab}, ok, true, []error{forward.ErrBadToken}},
		{"negative prompt id", []int32{-1}, ok, true, []error{forward.ErrBadToken}},
		{"prompt equal to the context", enginetest.Tokens(0, 8), ok, true, []error{forward.ErrContextExceeded}},
		{"prompt longer than the context", enginetest.Tokens(0, 9), ok, true, []error{forward.ErrContextExceeded}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seq := enginetest.NewCountingSequence(testVocab)
			rec := enginetest.NewRecorder(enginetest.NewSequenceForward(t, seq, 8))
			var opts []engine.Option
			if tt.sampler {
				opts = append(opts, engine.WithSampler(enginetest.Greedy{}))
			}
			s, err := engine.NewSession(rec, enginetest.NewCountingVocab(testVocab), opts...)
			require.NoError(t, err)
			turn, err := s.Generate(tt.prompt, tt.cfg)
			for _, want := range tt.want {
				assert.ErrorIs(t, err, want)
			}
			assert.Zero(t, turn.Generated)
			assert.Empty(t, rec.Forwards, "refused whole: nothing runs")
			assert.Empty(t, rec.Reserves)
			assert.Empty(t, seq.Log)
		})
	}
}

func TestNewSessionRefusals(t *testing.T) {
	fwd := enginetest.NewSequenceForward(t, enginetest.NewCountingSequence(testVocab), 8)
	_, err := engine.NewSession(nil, enginetest.NewCountingVocab(4))
	assert.ErrorIs(t, err, engine.ErrBadConfig)
	_, err = engine.NewSession(fwd, nil)
	assert.ErrorIs(t, err, engine.ErrBadConfig)
	_, err = engine.NewSession(fwd, enginetest.NewVocab(nil))
	assert.ErrorIs(t, err, engine.ErrBadConfig)
}

func TestGenerateBudget(t *testing.T) {
	tests := []struct {
		name       string
		ctx        int
		prompt     int
		maxTokens  int
		wantGen    int
		wantStop   engine.StopReason
		wantCapped bool
	}{
		{"room below MaxTokens caps", 8, 5, 10, 3, engine.StopContext, true},
		{"room equal to MaxTokens", 8, 5, 3, 3, engine.StopMaxTokens, false},
		{"room above MaxTokens", 8, 2, 3, 3, engine.StopMaxTokens, false},
		{"one position left", 8, 7, 4, 1, engine.StopContext, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, tt.ctx, nil)
			turn, err := r.s.Generate(enginetest.Tokens(1, tt.prompt), engine.GenerateConfig{MaxTokens: tt.maxTokens})
			require.NoError(t, err)
			assert.Equal(t, tt.wantGen, turn.Generated)
			assert.Equal(t, tt.wantStop, turn.Stop)
			assert.Equal(t, tt.wantCapped, turn.ContextCapped)
			assert.Equal(t, []int{tt.prompt + tt.wantGen}, r.rec.Reserves)
			assert.LessOrEqual(t, len(turn.Tokens), tt.ctx)
		})
	}
}

func TestGenerateEndTokens(t *testing.T) {
	const eog = 6
	tests := []struct {
		name     string
		cfg      engine.GenerateConfig
		wantStop engine.StopReason
		wantGen  []int32
		wantText string
	}{
		{"end of generation", engine.GenerateConfig{MaxTokens: 10}, engine.StopEOG, []int32{4, 5, 6}, "4 5 "},
		{"stop token", engine.GenerateConfig{MaxTokens: 10, StopTokens: []int32{5}}, engine.StopToken, []int32{4, 5}, "4 "},
		{"ignore EOG runs on", engine.GenerateConfig{MaxTokens: 5, IgnoreEOG: true}, engine.StopMaxTokens,
			[]int32{4, 5, 0, 1, 2}, "4 5 0 1 2 "}, // 6 is masked: the next best logit is id 0
		{"ignore EOG keeps stop tokens", engine.GenerateConfig{MaxTokens: 5, IgnoreEOG: true, StopTokens: []int32{1}},
			engine.StopToken, []int32{4, 5, 0, 1}, "4 5 0 "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, 64, enginetest.NewCountingVocab(10, eog))
			var ids []int32
			var text []byte
			tt.cfg.OnToken = func(id int32, b []byte) error {
				ids = append(ids, id)
				text = append(text, b...)
				return nil
			}
			turn, err := r.s.Generate([]int32{1, 2, 3}, tt.cfg)
			require.NoError(t, err)
			assert.Equal(t, tt.wantStop, turn.Stop)
			assert.Equal(t, tt.wantGen, turn.GeneratedTokens())
			assert.Equal(t, tt.wantGen, ids, "every chosen token is announced")
			assert.Equal(t, tt.wantText, string(text), "an end token's piece is never streamed")
			assert.Equal(t, tt.wantText, string(turn.Text))
			assert.Equal(t, len(tt.wantGen)-1, turn.Timings.DecodeForwards, "the last token is never forwarded")
		})
	}
}

func TestGenerateSeeds(t *testing.T) {
	run := func(s *uint64) engine.Turn {
		r := newRig(t, 256, nil)
		turn, err := r.s.Generate([]int32{1}, engine.GenerateConfig{MaxTokens: 48, Seed: s,
			Sampler: &enginetest.Temperature{T: 1}})
		require.NoError(t, err)
		return turn
	}
	a, b, c := run(seed(42)), run(seed(42)), run(seed(43))
	assert.Equal(t, uint64(42), a.Seed)
	assert.Equal(t, a.Tokens, b.Tokens, "same seed, same tokens")
	assert.NotEqual(t, a.Tokens, c.Tokens, "another seed, other tokens")

	random := run(nil)
	again := run(seed(random.Seed))
	assert.Equal(t, random.Tokens, again.Tokens, "the reported random seed reproduces the turn")
	assert.NotEqual(t, random.Seed, run(nil).Seed, "unset seeds are drawn per turn")
}

func TestGenerateCallbackStops(t *testing.T) {
	r := newRig(t, 64, nil)
	full := errors.New("client buffer full")
	var ids []int32
	turn, err := r.s.Generate([]int32{1}, engine.GenerateConfig{MaxTokens: 10,
		OnToken: func(id int32, _ []byte) error {
			ids = append(ids, id)
			if len(ids) == 3 {
				return full
			}
			return nil
		}})
	require.NoError(t, err)
	assert.Equal(t, engine.StopCallback, turn.Stop)
	assert.Equal(t, "callback", turn.Stop.String())
	assert.ErrorIs(t, turn.Cause, full)
	assert.Equal(t, []int32{2, 3, 4}, ids, "no call after the error")
	assert.Equal(t, 3, turn.Generated)
	assert.Equal(t, 2, turn.Timings.DecodeForwards)
}

func TestGenerateLogprobs(t *testing.T) {
	r := newRig(t, 64, nil)
	turn, err := r.s.Generate([]int32{1}, engine.GenerateConfig{MaxTokens: 3, TopLogprobs: 2})
	require.NoError(t, err)
	require.Len(t, turn.Logprobs, 3)
	// The counting logits: 1 at the next id, 0 at the 31 others.
	peak := []float32{0, 0, 1}
	peak = append(peak, make([]float32, testVocab-3)...)
	for i, step := range turn.Logprobs {
		assert.Equal(t, turn.GeneratedTokens()[i], step.Token)
		assert.InDelta(t, engine.LogSoftmaxAt(peak, 2), step.Logprob, 1e-6)
		require.Len(t, step.Top, 2)
		assert.Equal(t, step.Token, step.Top[0].Token)
		assert.Equal(t, int32(0), step.Top[1].Token, "the ties break by lower id")
		assert.InDelta(t, engine.LogSoftmaxAt(peak, 0), step.Top[1].Logprob, 1e-6)
	}

	none, err := r.s.Generate([]int32{1}, engine.GenerateConfig{MaxTokens: 3})
	require.NoError(t, err)
	assert.Nil(t, none.Logprobs)
	only, err := r.s.Generate([]int32{1}, engine.GenerateConfig{MaxTokens: 3, Logprobs: true})
	require.NoError(t, err)
	require.Len(t, only.Logprobs, 3)
	assert.Nil(t, only.Logprobs[0].Top)
}

// TestOnLogprobsPrecedesOnToken: each step's logprobs reach OnLogprobs
// before OnToken is called for that token, and equal Turn.Logprobs.
func TestOnLogprobsPrecedesOnToken(t *testing.T) {
	r := newRig(t, 64, nil)
	var events []string
	var streamed []engine.StepLogprobs
	turn, err := r.s.Generate([]int32{1}, engine.GenerateConfig{MaxTokens: 3, TopLogprobs: 1,
		OnLogprobs: func(st engine.StepLogprobs) {
			streamed = append(streamed, st)
			events = append(events, fmt.Sprintf("logprobs %d", st.Token))
		},
		OnToken: func(id int32, _ []byte) error {
			events = append(events, fmt.Sprintf("token %d", id))
			return nil
		}})
	require.NoError(t, err)
	assert.Equal(t, []string{"logprobs 2", "token 2", "logprobs 3", "token 3", "logprobs 4", "token 4"}, events)
	assert.Equal(t, turn.Logprobs, streamed)

	events = nil
	_, err = r.s.Generate([]int32{1}, engine.GenerateConfig{MaxTokens: 2,
		OnLogprobs: func(engine.StepLogprobs) { events = append(events, "logprobs") }})
	require.NoError(t, err)
	assert.Empty(t, events, "no calls unless Logprobs or TopLogprobs asks for them")
}

func TestGenerateReportsGPU(t *testing.T) {
	r := newRig(t, 64, nil)
	r.seq.BackendName, r.seq.GPU = "cuda", true
	turn, err := r.s.Generate([]int32{1}, engine.GenerateConfig{MaxTokens: 2})
	require.NoError(t, err)
	assert.True(t, turn.UsedGPU)
	assert.Equal(t, enginetest.Arch, r.s.Model().(*enginetest.Recorder).ArchForward.(*forward.SequenceForward).Arch())
}

func TestStopReasonString(t *testing.T) {
	want := map[engine.StopReason]string{
		engine.StopNone: "none", engine.StopEOG: "eog", engine.StopToken: "stop-token",
		engine.StopByPolicy: "stop-policy", engine.StopMaxTokens: "max-tokens", engine.StopContext: "context",
		engine.StopCancelled: "cancelled", engine.StopCallback: "callback", engine.StopReason(200): "invalid",
	}
	for r, s := range want {
		assert.Equal(t, s, r.String())
	}
}
