package engine_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/engine"
	"github.com/realizar-host/realizar-host/engine/enginetest"
	"github.com/realizar-host/realizar-host/forward"
)

// batchSeq is one sequence of a ForwardBatch test: a counting step (with a
// batched Prefill, or else a Batcher) whose greedy continuation of token
// t is t+1+shift, its forward, and a Session over it with a greedy sampler
// of its own. Its capacity is the whole context, so no Reserve drops what it
// holds.
type batchSeq struct {
	seq  *enginetest.CountingSequence
	fwd  *forward.SequenceForward
	sess *engine.Session
}

// newBatchSeq makes a sequence; with passes not nil its step is a
// batchingSequence counting the shared passes there.
func newBatchSeq(t *testing.T, ctx, shift int, passes *int) *batchSeq {
	t.Helper()
	q := &batchSeq{seq: enginetest.NewCountingSequence(testVocab)}
	q.seq.Next = func(token int32, _ int) int32 { return (token + 1 + int32(shift)) % testVocab }
	q.seq.Capacity = ctx
	var seq forward.Sequence = enginetest.WithPrefill(q.seq)
	if passes != nil {
		seq = batchingSequence{PrefillSequence: enginetest.WithPrefill(q.seq), passes: passes}
	}
	q.fwd = enginetest.NewSequenceForward(t, seq, ctx)
	s, err := engine.NewSession(q.fwd, enginetest.NewCountingVocab(testVocab), engine.WithSampler(enginetest.Greedy{}))
	require.NoError(t, err)
	q.sess = s
	return q
}

// newBatchSeqs returns n sequences of context ctx; sequence i shifts by i.
func newBatchSeqs(t *testing.T, n, ctx int, passes *int) []*batchSeq {
	t.Helper()
	seqs := make([]*batchSeq, n)
	for i := range seqs {
		seqs[i] = newBatchSeq(t, ctx, i, passes)
	}
	return seqs
}

// batchingSequence is a counting step with forward.Batcher: one call steps
// the rows of every sequence in turn (each row's own counting step, which
// checks the positions), counting the call in passes.
type batchingSequence struct {
	enginetest.PrefillSequence
	passes *int
}

func (b batchingSequence) Batch(rows []forward.Rows) error {
	*b.passes++
	for i := range rows {
		r := &rows[i]
		st, ok := r.Sequence.(batchingSequence)
		if !ok {
			r.Err = fmt.Errorf("row %d: a %T in a pass of counting steps", i, r.Sequence)
			continue
		}
		var logits, every []float32
		var err error
		for k, tok := range r.Tokens {
			if logits, err = st.Step(tok, r.Start+k); err != nil {
				break
			}
			every = append(every, logits...)
		}
		switch {
		case err != nil:
			r.Err = err
		case r.Logits && r.Every:
			r.Out = every
		case r.Logits:
			r.Out = logits
		}
	}
	return nil
}

// batchPrompts are the prompts of three sequences, of different lengths.
var batchPrompts = [][]int32{{1, 2, 3}, {5, 6, 7, 8, 9, 10, 11}, {20}}

// driveBatch runs every run to its end through shared ForwardBatch passes,
// each span capped at maxTokens (0: none; a capped prompt continues in the
// next pass at what its forward holds), and returns the number of passes.
// before, when not nil, is called before each pass with its index.
func driveBatch(runs []*engine.Run, seqs []*batchSeq, maxTokens int, before func(pass int)) int {
	chunked := make([]bool, len(runs))
	for pass := 0; ; pass++ {
		var spans []forward.Span
		var owner []int
		for i, run := range runs {
			tokens, start, ok := run.Next()
			if !ok {
				continue
			}
			if chunked[i] {
				start = seqs[i].fwd.Held()
			}
			spans = append(spans, forward.Span{Fwd: seqs[i].fwd, Tokens: tokens, Start: start, Max: maxTokens})
			owner = append(owner, i)
		}
		if len(spans) == 0 {
			return pass
		}
		if before != nil {
			before(pass)
		}
		forward.ForwardBatch(spans)
		for j, sp := range spans {
			i := owner[j]
			if chunked[i] = sp.Err == nil && sp.Logits == nil; chunked[i] {
				continue
			}
			runs[i].Feed(sp.Logits, sp.Took, sp.Err)
		}
	}
}

// beginAll begins one turn per sequence.
func beginAll(t *testing.T, seqs []*batchSeq, prompts [][]int32, cfg engine.GenerateConfig) []*engine.Run {
	t.Helper()
	runs := make([]*engine.Run, len(seqs))
	for i, q := range seqs {
		run, err := q.sess.Begin(prompts[i], cfg)
		require.NoError(t, err)
		assert.Same(t, q.sess, run.Session())
		runs[i] = run
	}
	return runs
}

// aloneTurns is what Generate gives on fresh sequences like seqs.
func aloneTurns(t *testing.T, n, ctx int, prompts [][]int32, cfg engine.GenerateConfig) []engine.Turn {
	t.Helper()
	want := make([]engine.Turn, n)
	for i, q := range newBatchSeqs(t, n, ctx, nil) {
		turn, err := q.sess.Generate(prompts[i], cfg)
		require.NoError(t, err)
		want[i] = turn
	}
	return want
}

// TestForwardBatchRunsMatchGenerate: three turns interleaved in shared
// passes, their prompts whole or in chunks (Span.Max), come out as each
// alone through Generate.
func TestForwardBatchRunsMatchGenerate(t *testing.T) {
	const ctx = 64
	cfg := engine.GenerateConfig{MaxTokens: 6, Seed: seed(1)}
	want := aloneTurns(t, 3, ctx, batchPrompts, cfg)
	tests := []struct {
		name       string
		max        int
		passes     int     // 1 prompt pass (or more, chunked) + 5 decode passes
		prefills   [][]int // per sequence: the Len of each recorded Prefill
		stepsAfter []int   // per sequence: the one-token Steps (the last chunk of a prompt, the decodes)
	}{
		{"whole prompts", 0, 6, [][]int{{3}, {7}, nil}, []int{5, 5, 6}},
		{"prompts in chunks of 2", 2, 4 + 5, [][]int{{2}, {2, 4, 6}, nil}, []int{6, 6, 6}},
		{"prompts in chunks of 3", 3, 3 + 5, [][]int{{3}, {3, 6}, nil}, []int{5, 6, 6}},
	}
	for _, tt := range tests {
		for _, batched := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/batched=%v", tt.name, batched), func(t *testing.T) {
				var calls *int
				if batched {
					calls = new(int)
				}
				seqs := newBatchSeqs(t, 3, ctx, calls)
				runs := beginAll(t, seqs, batchPrompts, cfg)
				passes := driveBatch(runs, seqs, tt.max, nil)
				assert.Equal(t, tt.passes, passes)
				if batched {
					assert.Equal(t, passes, *calls, "one Batch call per pass")
				}
				for i, run := range runs {
					_, _, more := run.Next()
					assert.False(t, more, "sequence %d has ended", i)
					got, err := run.Result()
					require.NoError(t, err, "sequence %d", i)
					assert.Equal(t, want[i].Tokens, got.Tokens, "sequence %d", i)
					assert.Equal(t, string(want[i].Text), string(got.Text), "sequence %d", i)
					assert.Equal(t, engine.StopMaxTokens, got.Stop)
					assert.Equal(t, len(batchPrompts[i]), got.Timings.PrefillTokens, "sequence %d: the whole prompt, chunks and all", i)
					assert.Equal(t, 5, got.Timings.DecodeForwards)
					if batched { // every token is one row of a pass, stepped once
						assert.Zero(t, seqs[i].seq.Count("prefill"))
						assert.Equal(t, len(batchPrompts[i])+5, seqs[i].seq.Count("step"), "sequence %d", i)
					} else {
						var prefills []int
						for _, c := range seqs[i].seq.Log {
							if c.Op == "prefill" {
								prefills = append(prefills, c.Len)
							}
						}
						assert.Equal(t, tt.prefills[i], prefills, "sequence %d", i)
						assert.Equal(t, tt.stepsAfter[i], seqs[i].seq.Count("step"), "sequence %d", i)
					}
					_, err = run.Result()
					assert.ErrorIs(t, err, engine.ErrRunFinished)
				}
				// The Sessions were released and know what their forwards
				// hold (every token but the last sampled): a follow-up
				// reuses it.
				for i, q := range seqs {
					next, err := q.sess.Generate(append(slices.Clone(want[i].Tokens), 1), engine.GenerateConfig{MaxTokens: 1})
					require.NoError(t, err)
					assert.Equal(t, len(want[i].Tokens)-1, next.Reused, "sequence %d", i)
				}
			})
		}
	}
}

// TestForwardBatchFailureIsPerRun: a span whose forward fails ends only its
// own run, with the error; the others complete as alone, and the failed
// Session replays from position 0 next time.
func TestForwardBatchFailureIsPerRun(t *testing.T) {
	const ctx = 64
	cfg := engine.GenerateConfig{MaxTokens: 6, Seed: seed(1)}
	want := aloneTurns(t, 3, ctx, batchPrompts, cfg)
	tests := []struct {
		name      string
		failPass  int // the pass before which sequence 1's next forward fails
		generated int // sequence 1's tokens before the failure
	}{
		{"in the prompt's pass", 0, 0},
		{"in a decode pass", 3, 3},
	}
	for _, tt := range tests {
		for _, batched := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/batched=%v", tt.name, batched), func(t *testing.T) {
				var calls *int
				if batched {
					calls = new(int)
				}
				seqs := newBatchSeqs(t, 3, ctx, calls)
				runs := beginAll(t, seqs, batchPrompts, cfg)
				boom := errors.New("device lost")
				driveBatch(runs, seqs, 0, func(pass int) {
					if pass == tt.failPass {
						seqs[1].seq.FailNext = boom
					}
				})
				for i, run := range runs {
					got, err := run.Result()
					if i == 1 {
						require.ErrorIs(t, err, boom)
						assert.Equal(t, engine.StopNone, got.Stop)
						assert.Equal(t, tt.generated, got.Generated)
						assert.Equal(t, want[1].Tokens[:len(batchPrompts[1])+tt.generated], got.Tokens, "the turn so far")
						continue
					}
					require.NoError(t, err, "sequence %d", i)
					assert.Equal(t, want[i].Tokens, got.Tokens, "sequence %d", i)
				}
				assert.Zero(t, seqs[1].fwd.Held(), "a failed forward holds nothing")
				again, err := seqs[1].sess.Generate(batchPrompts[1], cfg)
				require.NoError(t, err)
				assert.Zero(t, again.Reused, "the failed Session replays from 0")
				assert.Equal(t, want[1].Tokens, again.Tokens)
			})
		}
	}
}

// TestRunCancelFalsifiers are the cancellation falsifiers of Generate
// (TestGenerateCancelWithPollBudget, TestGenerateAlreadyCancelled) through
// Begin/Next/ForwardBatch/Feed: the token is polled once per decode step,
// a budget of 8 polls yields 8 tokens, and a pre-cancelled token runs
// nothing.
func TestRunCancelFalsifiers(t *testing.T) {
	prompt := []int32{1, 2, 3}
	tests := []struct {
		name        string
		ctx, max    int
		cancel      func() *engine.CancelToken
		stop        engine.StopReason
		generated   int
		decodes     int // one-token Steps after the prompt's Prefill
		polls       int
		prefills    int
		reserves    int
		errCanceled bool
	}{
		{"a budget of 8 polls cuts a 64-token turn", 128, 64, func() *engine.CancelToken { return engine.NewCancelTokenAfter(8) },
			engine.StopCancelled, 8, 8, 9, 1, 1, true},
		// With MaxTokens 8 the budget of 8 polls is never exceeded: the
		// turn ends at its 8th token, after 7 decode forwards and 8 polls.
		{"a budget of 8 polls and 8 tokens", 64, 8, func() *engine.CancelToken { return engine.NewCancelTokenAfter(8) },
			engine.StopMaxTokens, 8, 7, 8, 1, 1, false},
		{"already cancelled", 64, 8, func() *engine.CancelToken { c := engine.NewCancelToken(); c.Cancel(); return c },
			engine.StopCancelled, 0, 0, 0, 0, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := newBatchSeq(t, tt.ctx, 0, nil)
			cancel := tt.cancel()
			var streamed []int32
			run, err := q.sess.Begin(prompt, engine.GenerateConfig{MaxTokens: tt.max, Cancel: cancel,
				OnToken: func(id int32, _ []byte) error { streamed = append(streamed, id); return nil }})
			require.NoError(t, err)
			driveBatch([]*engine.Run{run}, []*batchSeq{q}, 0, nil)
			got, err := run.Result()
			require.NoError(t, err)
			assert.Equal(t, tt.stop, got.Stop)
			if tt.errCanceled {
				assert.ErrorIs(t, got.Cause, engine.ErrCancelled)
			}
			assert.Equal(t, tt.generated, got.Generated)
			assert.Equal(t, tt.decodes, q.seq.Count("step"), "decode forwards")
			assert.Equal(t, tt.decodes, got.Timings.DecodeForwards)
			assert.Equal(t, tt.polls, cancel.Polls())
			assert.Equal(t, tt.prefills, q.seq.Count("prefill"))
			assert.Equal(t, tt.reserves, q.seq.Count("reserve"))
			if tt.generated > 0 {
				assert.Equal(t, got.GeneratedTokens(), streamed)
				want, err := newBatchSeq(t, tt.ctx, 0, nil).sess.Generate(prompt, engine.GenerateConfig{MaxTokens: 64})
				require.NoError(t, err)
				assert.Equal(t, want.Tokens[:len(prompt)+tt.generated], got.Tokens, "a prefix of the uncancelled run")
			} else {
				assert.Empty(t, streamed, "nothing emitted")
				assert.Empty(t, got.Text)
			}
		})
	}
}

// A driver that gives up on a span (the request ended between the chunks
// of its prompt) feeds an error wrapping ErrCancelled: the turn ends as
// cancelled with that cause, not as a failure, and the Session forgets what
// its forward holds, so the next turn replays from 0 (the chunk it did
// forward is not taken for the old tokens).
func TestRunFeedCancelledSpan(t *testing.T) {
	q := newBatchSeq(t, 64, 0, nil)
	prompt := []int32{1, 2, 3, 4, 5, 6}
	first, err := q.sess.Generate(prompt, engine.GenerateConfig{MaxTokens: 2, Seed: seed(1)})
	require.NoError(t, err)

	run, err := q.sess.Begin(append(slices.Clone(first.Tokens), 9, 9, 9), engine.GenerateConfig{MaxTokens: 4, Seed: seed(1)})
	require.NoError(t, err)
	tokens, start, ok := run.Next()
	require.True(t, ok)
	spans := []forward.Span{{Fwd: q.fwd, Tokens: tokens, Start: start, Max: 1}} // one chunk, then give up
	forward.ForwardBatch(spans)
	require.NoError(t, spans[0].Err)
	require.Nil(t, spans[0].Logits)
	cause := fmt.Errorf("%w: client went away", engine.ErrCancelled)
	run.Feed(nil, spans[0].Took, cause)
	_, _, ok = run.Next()
	assert.False(t, ok)
	turn, err := run.Result()
	require.NoError(t, err, "a cancelled span is a stop reason, not a failure")
	assert.Equal(t, engine.StopCancelled, turn.Stop)
	assert.ErrorIs(t, turn.Cause, engine.ErrCancelled)
	assert.Equal(t, 0, turn.Generated)

	again, err := q.sess.Generate(prompt, engine.GenerateConfig{MaxTokens: 2, Seed: seed(1)})
	require.NoError(t, err)
	assert.Equal(t, 0, again.Reused, "the Session forgot the partly overwritten state")
	assert.Equal(t, first.Tokens, again.Tokens)
}

// TestForwardBatchVerifySpans: three speculative turns share ForwardBatch
// passes, each verify span (Span.Verify) beside the others' prompts and
// verify spans, some cut to their first rows by the driver (FeedRows
// takes fewer rows); each comes out as alone through Generate.
func TestForwardBatchVerifySpans(t *testing.T) {
	const ctx = 64
	cfg := engine.GenerateConfig{MaxTokens: 12, Seed: seed(1)}
	want := aloneTurns(t, 3, ctx, batchPrompts, cfg)
	for _, rows := range []int{0, 1, 2} { // rows a verify span may take (0: all)
		for _, batched := range []bool{false, true} {
			t.Run(fmt.Sprintf("rows=%d/batched=%v", rows, batched), func(t *testing.T) {
				var calls *int
				if batched {
					calls = new(int)
				}
				seqs := newBatchSeqs(t, 3, ctx, calls)
				runs := make([]*engine.Run, len(seqs))
				for i, q := range seqs {
					c := cfg
					c.Draft = &countDrafter{vocab: testVocab, k: 3, wrongEvery: 4 + i, shift: i}
					run, err := q.sess.Begin(batchPrompts[i], c)
					require.NoError(t, err)
					runs[i] = run
				}
				prefilled := make([]bool, len(runs))
				passes := 0
				for ; ; passes++ {
					var spans []forward.Span
					var owner []int
					for i, run := range runs {
						tokens, start, ok := run.NextDraft()
						if !ok {
							continue
						}
						if prefilled[i] && rows > 0 {
							tokens = tokens[:min(len(tokens), start+rows)]
						}
						spans = append(spans, forward.Span{Fwd: seqs[i].fwd, Tokens: tokens, Start: start, Verify: prefilled[i]})
						owner = append(owner, i)
						prefilled[i] = true
					}
					if len(spans) == 0 {
						break
					}
					forward.ForwardBatch(spans)
					for j, sp := range spans {
						runs[owner[j]].FeedRows(sp.Logits, sp.Took, sp.Err)
					}
				}
				if batched {
					assert.Equal(t, passes, *calls, "one Batch call per pass")
				}
				for i, run := range runs {
					got, err := run.Result()
					require.NoError(t, err, "sequence %d", i)
					assert.Equal(t, want[i].Tokens, got.Tokens, "sequence %d", i)
					assert.Equal(t, string(want[i].Text), string(got.Text), "sequence %d", i)
					assert.Equal(t, want[i].Stop, got.Stop, "sequence %d", i)
					if rows == 1 {
						assert.Zero(t, got.Drafts.Drafted, "sequence %d: one row verifies no draft", i)
						continue
					}
					assert.Positive(t, got.Drafts.Accepted, "sequence %d", i)
					assert.Less(t, got.Timings.DecodeForwards, want[i].Timings.DecodeForwards, "sequence %d", i)
				}
			})
		}
	}
}
