package parity

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/gguf"
	"github.com/realizar-host/realizar-host/model"
	"github.com/realizar-host/realizar-host/tools/llamaref/internal/reftest"
	"github.com/realizar-host/realizar-host/tools/llamaref/ref"
)

// phi3's LongRoPE at either side of llama.cpp's switch: with the reference
// at n_ctx 256 (not above phi3-tiny's original context of 256) both sides
// take rope_factors_short, at 512 (TestTeacherForcedLogits) both take
// rope_factors_long; the teacher-forced logits are llama.cpp's bit for bit
// at each, and the two factor sets give different logits.
func TestLongRoPEFactorsBothSides(t *testing.T) {
	l := reftest.Lib(t)
	for _, tg := range targets(t, l) {
		if !strings.HasPrefix(tg.name, "fixture-phi3-tiny-") || !bitExact(tg.name) && strings.HasSuffix(tg.name, "Q4_K_M") {
			continue // Q4_K_M where quant does not follow ggml's Q4_K order on this CPU
		}
		t.Run(tg.name, func(t *testing.T) {
			rm := reftest.Model(t, l, tg.path)
			toks := storyTokens(t, rm)[:200]
			byCtx := map[int][][]float32{}
			for _, tc := range []struct {
				ctx     int
				factors string
			}{{256, "rope_factors_short.weight"}, {512, "rope_factors_long.weight"}} {
				rc := reftest.Context(t, rm, ref.ContextConfig{NCtx: tc.ctx, NBatch: 1})
				want, err := rc.Logits(toks)
				require.NoError(t, err)
				f, err := gguf.Open(tg.path)
				require.NoError(t, err)
				m, err := model.Load(f, model.Options{Threads: 2, ContextSize: tc.ctx})
				require.NoError(t, err)
				assert.Equal(t, tc.factors, m.RopeFactors())
				s := m.NewSequence()
				same := 0
				for i, tok := range toks {
					got, err := s.Step(tok, i)
					require.NoError(t, err)
					if slices.Equal(bitsOf(got), bitsOf(want[i])) {
						same++
					}
				}
				m.Close()
				f.Close()
				t.Logf("n_ctx %d (%s): %d of %d positions bit-identical", tc.ctx, tc.factors, same, len(toks))
				assert.Equal(t, len(toks), same, "n_ctx %d", tc.ctx)
				byCtx[tc.ctx] = want
			}
			assert.NotEqual(t, byCtx[256][len(toks)-1], byCtx[512][len(toks)-1], "the factor sets differ in llama.cpp too")
		})
	}
}
