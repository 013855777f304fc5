package model

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/forward"
	"github.com/realizar-host/realizar-host/internal/quant"
)

// batchSeqs are sequences of mixed lengths (from one token up) that start
// where testTokens are rotated, so no two share a prefix.
func batchSeqs(n int) [][]int32 {
	lens := []int{1, 12, 5, 9, 2, 7, 3, 11}
	seqs := make([][]int32, n)
	for i := range seqs {
		for j := range lens[i%len(lens)] {
			seqs[i] = append(seqs[i], testTokens[(i+j)%len(testTokens)])
		}
	}
	return seqs
}

// A sequence's logits in a batched pass are bit-identical to its logits
// alone, whatever its neighbours: B sequences of mixed lengths, prefilled
// together in one pass (from position 0, and continuing a held prefix),
// then decoded together token by token, against each run alone with the
// same spans (Prefill of the same chunks, then Step): a sequence's rows
// take ggml's batch orders when it has two or more in the pass, whatever
// the pass's other rows.
func TestBatchEqualsAlone(t *testing.T) {
	for _, sp := range []spec{kSpec("qwen2", quant.Q4_K), kSpec("llama", quant.Q6_K), tinySpec("llama"), qwen3Spec(), moeSpec(), phi3Spec(), gemma3Spec()} {
		path := sp.write(t)
		m := open(t, path, Options{Threads: 2})
		for _, b := range []int{1, 2, 3, 8} {
			seqs := batchSeqs(b)
			const extra = 4 // decode steps after the prompts
			want := make([][][]float32, b)
			full := make([][]int32, b)
			for i, seq := range seqs {
				full[i] = append(append([]int32(nil), seq...), testTokens[:extra]...)
				want[i] = aloneSpans(t, m.NewSequence(), seq, full[i])
			}
			sequences := make([]*Sequence, b)
			for i := range sequences {
				sequences[i] = m.NewSequence()
			}
			// Prefill: sequences longer than 4 tokens take their first 3
			// alone first, so the pass mixes starts at 0 and at 3.
			rows := make([]forward.Rows, b)
			for i, seq := range seqs {
				start := 0
				if len(seq) > 4 {
					_, err := sequences[i].Prefill(seq[:3], 0)
					require.NoError(t, err)
					start = 3
				}
				rows[i] = forward.Rows{Sequence: sequences[i], Start: start, Tokens: seq[start:], Logits: true}
			}
			require.NoError(t, sequences[0].Batch(rows))
			for i, r := range rows {
				require.NoError(t, r.Err)
				assert.Equal(t, want[i][0], r.Out, "%s B=%d seq %d prefill", sp.arch, b, i)
			}
			// Decode: one token each, the pass run on a step outside it
			// too (the last one's scratch).
			for k := range extra {
				leader := sequences[k%b]
				for i, seq := range seqs {
					rows[i] = forward.Rows{Sequence: sequences[i], Start: len(seq) + k, Tokens: full[i][len(seq)+k : len(seq)+k+1], Logits: i%2 == 0 || k == extra-1}
				}
				require.NoError(t, leader.Batch(rows))
				for i := range seqs {
					if !rows[i].Logits {
						assert.Nil(t, rows[i].Out)
						continue
					}
					assert.Equal(t, want[i][1+k], rows[i].Out, "%s B=%d seq %d decode %d", sp.arch, b, i, k)
				}
			}
		}
	}
}

// aloneSpans runs seq alone as TestBatchEqualsAlone's passes cut it (a
// sequence longer than 4 tokens prefills its first 3 first, then the rest
// as one span), then steps full's tokens after it: out[0] is the logits
// after the prompt, out[1+k] after decode step k.
func aloneSpans(t *testing.T, s *Sequence, seq, full []int32) [][]float32 {
	t.Helper()
	start := 0
	if len(seq) > 4 {
		_, err := s.Prefill(seq[:3], 0)
		require.NoError(t, err)
		start = 3
	}
	l, err := s.Prefill(seq, start)
	require.NoError(t, err)
	out := [][]float32{append([]float32(nil), l...)}
	for pos := len(seq); pos < len(full); pos++ {
		l, err := s.Step(full[pos], pos)
		require.NoError(t, err)
		out = append(out, append([]float32(nil), l...))
	}
	return out
}

// A bad row fails alone: the others run and stay bit-identical.
func TestBatchBadRowFailsAlone(t *testing.T) {
	path := tinySpec("llama").write(t)
	m := open(t, path, Options{Threads: 2})
	other := open(t, path, Options{Threads: 1})
	want, err := m.NewSequence().Prefill(testTokens[:4], 0)
	require.NoError(t, err)
	good, gap, foreign := m.NewSequence(), m.NewSequence(), other.NewSequence()
	rows := []forward.Rows{
		{Sequence: gap, Start: 2, Tokens: testTokens[:1], Logits: true},  // nothing held
		{Sequence: good, Start: 0, Tokens: testTokens[:4], Logits: true}, // fine
		{Sequence: foreign, Start: 0, Tokens: testTokens[:2], Logits: true},
		{Sequence: good, Start: 0, Tokens: testTokens[:1], Logits: true},                 // the same sequence twice
		{Sequence: m.NewSequence(), Start: 0, Tokens: []int32{1 << 20}, Logits: true},    // not a token
		{Sequence: m.NewSequence(), Start: 0, Tokens: nil, Logits: true},                 // nothing
		{Sequence: m.NewSequence(), Start: 60, Tokens: make([]int32, 10), Logits: false}, // past the context
	}
	require.NoError(t, good.Batch(rows))
	assert.ErrorIs(t, rows[0].Err, ErrPosition)
	assert.NoError(t, rows[1].Err)
	assert.Equal(t, want, rows[1].Out)
	assert.ErrorIs(t, rows[2].Err, ErrForeignSequence)
	assert.ErrorIs(t, rows[3].Err, ErrForeignSequence)
	assert.ErrorIs(t, rows[4].Err, forward.ErrBadToken)
	assert.ErrorIs(t, rows[5].Err, ErrPosition)
	assert.Error(t, rows[6].Err)
}
