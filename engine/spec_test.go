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

// countDrafter drafts the counting model's next tokens (token+1+shift,
// ...), with every wrongEvery-th draft token off by one.
type countDrafter struct {
	vocab, k, wrongEvery, n, shift int
}

func (d *countDrafter) Reset([]int32)     {}
func (d *countDrafter) Accepted(int, int) {}
func (d *countDrafter) Draft(dst, tokens []int32, limit int) []int32 {
	t := tokens[len(tokens)-1]
	for range min(d.k, limit) {
		t = (t + 1 + int32(d.shift)) % int32(d.vocab)
		d.n++
		if d.wrongEvery > 0 && d.n%d.wrongEvery == 0 {
			dst = append(dst, (t+1)%int32(d.vocab))
			continue
		}
		dst = append(dst, t)
	}
	return dst
}

// Cancellation, the budget, stop tokens and a failed step act per
// accepted token: a speculative turn ends where and as the plain turn does.
func TestSpeculativeEndsAsPlain(t *testing.T) {
	const vocab = 50
	tests := []struct {
		name  string
		cfg   func() engine.GenerateConfig
		fail  int // fail the step at this forward call (0: none)
		wantE bool
	}{
		{"budget", func() engine.GenerateConfig { return engine.GenerateConfig{MaxTokens: 17} }, 0, false},
		{"cancel after 9 polls", func() engine.GenerateConfig {
			return engine.GenerateConfig{MaxTokens: 40, Cancel: engine.NewCancelTokenAfter(9)}
		}, 0, false},
		{"stop token", func() engine.GenerateConfig { return engine.GenerateConfig{MaxTokens: 40, StopTokens: []int32{23}} }, 0, false},
		{"a failed step", func() engine.GenerateConfig { return engine.GenerateConfig{MaxTokens: 40} }, 4, true},
	}
	for _, tt := range tests {
		for _, wrong := range []int{0, 3} {
			t.Run(tt.name, func(t *testing.T) {
				turn := func(d engine.Drafter) (engine.Turn, int, error) {
					seq := enginetest.NewCountingSequence(vocab)
					fwd, err := forward.NewSequenceForward(seq, forward.Options{ModelContext: 64})
					require.NoError(t, err)
					sess, err := engine.NewSession(fwd, enginetest.NewCountingVocab(vocab), engine.WithSampler(enginetest.Greedy{}))
					require.NoError(t, err)
					cfg := tt.cfg()
					cfg.Draft = d
					if tt.fail > 0 {
						n := 0
						seq.Next = func(tok int32, pos int) int32 {
							if n++; n == tt.fail+5 {
								seq.FailNext = errors.New("fault")
							}
							return (tok + 1) % vocab
						}
					}
					got, err := sess.Generate([]int32{1, 2, 3, 4, 5}, cfg)
					return got, fwd.Held(), err
				}
				plain, _, perr := turn(nil)
				spec, held, serr := turn(&countDrafter{vocab: vocab, k: 4, wrongEvery: wrong})
				if !tt.wantE {
					assert.Equal(t, plain.GeneratedTokens(), spec.GeneratedTokens())
					assert.Equal(t, plain.Stop, spec.Stop)
					assert.Equal(t, string(plain.Text), string(spec.Text))
					assert.Positive(t, spec.Drafts.Accepted)
					return
				}
				require.Error(t, perr)
				require.Error(t, serr)
				assert.Equal(t, 0, held, "a failed step leaves nothing held")
			})
		}
	}
}
