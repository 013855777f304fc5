package model

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/forward"
	"github.com/realizar-host/realizar-host/gguf"
	"github.com/realizar-host/realizar-host/internal/quant"
	"github.com/realizar-host/realizar-host/internal/quant/quanttest"
)

// verifySpecs are the models the verify pass is checked on: every weight
// type the forward multiplies (quanttest.WeightTypes) in a llama, and each
// architecture's own layers (biases, per-head norms, experts, fused
// products, sliding windows and softcap) in Q4_K.
func verifySpecs() []spec {
	var specs []spec
	for _, typ := range quanttest.WeightTypes {
		specs = append(specs, kSpec("llama", typ))
	}
	qwen2 := kSpec("qwen2", quant.Q4_K)
	qwen2.biases = true
	gemma := gemma3Spec()
	gemma.extraKV = append(gemma.extraKV[:len(gemma.extraKV):len(gemma.extraKV)], gguf.KV{Key: "gemma3.final_logit_softcapping", Value: float32(3)})
	return append(specs, tinySpec("llama"), qwen2, qwen3Spec(), moeSpec(), phi3Spec(), gemma)
}

// A verify pass's rows are bit-identical to one-token steps at the same
// positions over the same held cache: from position 0, after a batched
// prefill, and after a rejected suffix (a second pass from the first
// rejected position overwrites it).
func TestVerifyEqualsSteps(t *testing.T) {
	toks := testTokens
	for _, sp := range verifySpecs() {
		name := fmt.Sprintf("%s %v", sp.arch, sp.weight)
		if sp.experts > 0 {
			name += " moe"
		}
		t.Run(name, func(t *testing.T) {
			m := open(t, sp.write(t), Options{Threads: 2})
			vocab := m.cfg.Vocab
			rowsOf := func(out []float32) [][]float32 {
				var rows [][]float32
				for i := 0; i < len(out); i += vocab {
					rows = append(rows, append([]float32(nil), out[i:i+vocab]...))
				}
				return rows
			}

			// From position 0.
			want := stepAll(t, m.NewSequence(), toks)
			v := m.NewSequence()
			got, err := v.Verify(toks, 0)
			require.NoError(t, err)
			require.Equal(t, want, rowsOf(got), "from 0")

			// After a batched prefill of 4: steps against one pass.
			const pre = 4
			ref := m.NewSequence()
			_, err = ref.Prefill(toks[:pre], 0)
			require.NoError(t, err)
			want = want[:0]
			for pos := pre; pos < len(toks); pos++ {
				l, err := ref.Step(toks[pos], pos)
				require.NoError(t, err)
				want = append(want, append([]float32(nil), l...))
			}
			_, err = v.Prefill(toks[:pre], 0)
			require.NoError(t, err)
			got, err = v.Verify(toks, pre)
			require.NoError(t, err)
			require.Equal(t, want, rowsOf(got), "after a prefill")

			// A rejected suffix: drafts that differ from toks after
			// position 7, then the pass again from 7.
			wrong := append([]int32(nil), toks...)
			for i := 7; i < len(wrong); i++ {
				wrong[i] = (wrong[i] + 1) % int32(vocab)
			}
			_, err = v.Prefill(toks[:pre], 0)
			require.NoError(t, err)
			got, err = v.Verify(wrong, pre)
			require.NoError(t, err)
			require.Equal(t, want[:7-pre], rowsOf(got)[:7-pre], "the accepted rows of a rejected pass")
			got, err = v.Verify(toks, 7)
			require.NoError(t, err)
			require.Equal(t, want[7-pre:], rowsOf(got), "after a rejected suffix")
			l, err := v.Step(toks[len(toks)-1], len(toks)-1)
			require.NoError(t, err)
			require.Equal(t, want[len(want)-1], l, "Step after Verify")

			// Amid other sequences (a prompt of 5 and a decode step) in
			// one Batch pass: the verify row (Every) keeps the
			// one-token order, the others get the bits they get alone.
			_, err = v.Prefill(toks[:pre], 0)
			require.NoError(t, err)
			prompt, dec := m.NewSequence(), m.NewSequence()
			_, err = dec.Prefill(toks[:3], 0)
			require.NoError(t, err)
			wantPrompt, err := m.NewSequence().Prefill(toks[:5], 0)
			require.NoError(t, err)
			wantPrompt = append([]float32(nil), wantPrompt...)
			ref = m.NewSequence()
			_, err = ref.Prefill(toks[:3], 0)
			require.NoError(t, err)
			wantDec, err := ref.Step(toks[3], 3)
			require.NoError(t, err)
			wantDec = append([]float32(nil), wantDec...)
			rows := []forward.Rows{
				{Sequence: prompt, Start: 0, Tokens: toks[:5], Logits: true},
				{Sequence: v, Start: pre, Tokens: toks[pre:], Logits: true, Every: true},
				{Sequence: dec, Start: 3, Tokens: toks[3:4], Logits: true},
			}
			require.NoError(t, v.Batch(rows))
			for _, r := range rows {
				require.NoError(t, r.Err)
			}
			require.Equal(t, want, rowsOf(rows[1].Out), "verify rows amid others")
			require.Equal(t, wantPrompt, rows[0].Out, "a prompt beside a verify span")
			require.Equal(t, wantDec, rows[2].Out, "a decode step beside a verify span")
		})
	}
}

func TestVerifyErrors(t *testing.T) {
	m := open(t, tinySpec("llama").write(t), Options{Threads: 1})
	s := m.NewSequence()
	_, err := s.Verify(testTokens[:3], 3)
	require.ErrorIs(t, err, ErrPosition)
	_, err = s.Verify(testTokens[:3], 1)
	require.ErrorIs(t, err, ErrPosition, "nothing held")
	_, err = s.Verify([]int32{1, 900}, 0)
	require.Error(t, err)
}
