package host

import (
	"context"
	"math"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/engine/enginetest"
)

func TestApplyMask(t *testing.T) {
	inf := float32(math.Inf(-1))
	for _, tc := range []struct {
		name   string
		n      int
		words  []uint32
		logits []float32
		want   []float32
		live   bool
	}{
		{"one word, some bits", 4, []uint32{0b0101}, []float32{1, 2, 3, 4}, []float32{1, inf, 3, inf}, true},
		{"bits past n_vocab ignored", 3, []uint32{0xfffffff8}, []float32{1, 2, 3}, []float32{inf, inf, inf}, false},
		{"allowed but -Inf", 2, []uint32{1}, []float32{inf, 5}, []float32{inf, inf}, false},
		{"allowed NaN is not live", 2, []uint32{1}, []float32{float32(math.NaN()), 5}, nil, false},
		{"all ones", 33, []uint32{math.MaxUint32, 1}, nil, nil, true},
		{"all zero then one", 40, []uint32{0, 1 << 7}, nil, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logits := tc.logits
			if logits == nil {
				logits = make([]float32, tc.n)
			}
			assert.Len(t, tc.words, abi.MaskWords(tc.n))
			assert.Equal(t, tc.live, applyMask(logits, tc.words))
			if tc.want != nil {
				assert.Equal(t, tc.want, logits)
			}
			for id, l := range logits {
				if !allowedBy(tc.words, int32(id)) {
					assert.True(t, math.IsInf(float64(l), -1), id)
				}
			}
		})
	}
}

// BenchmarkApplyMask is the host's share of a mask step at 152k: applying
// the words to the logits. Applying the same mask again does the same work
// (allowed logits are untouched), so the logits are not reset per
// iteration. sparse allows 3 tokens, dense all, holes all but one token in
// eight words (a grammar inside a string), half every other token (the
// worst case: every word is mixed).
func BenchmarkApplyMask(b *testing.B) {
	const n = 151936
	words := make([]uint32, abi.MaskWords(n))
	for _, tc := range []struct {
		name string
		fill func()
	}{
		{"sparse", func() { clear(words); words[3] = 0b1011 }},
		{"dense", func() {
			for k := range words {
				words[k] = math.MaxUint32
			}
		}},
		{"holes", func() {
			for k := range words {
				words[k] = math.MaxUint32
				if k%8 == 0 {
					words[k] = math.MaxUint32 &^ (1 << (k % 32))
				}
			}
		}},
		{"half", func() {
			for k := range words {
				words[k] = 0x55555555
			}
		}},
	} {
		tc.fill()
		logits := make([]float32, n)
		b.Run("vocab="+strconv.Itoa(n)+"/"+tc.name, func(b *testing.B) {
			for b.Loop() {
				applyMask(logits, words)
			}
		})
	}
}

// benchVocab has n tokens "x"; the last ends a turn.
func benchVocab(n int) *enginetest.Vocab {
	return enginetest.NewVocab(slices.Repeat([]string{"x"}, n), int32(n-1))
}

// BenchmarkMaskStage is the whole per-step cost of an ABI 2 mask-mode
// processor stage (testdata/mask.wat) at 152k, as Sample pays it: the call
// (the guest updates two bits of the mask it keeps in its memory and
// returns its address), reading MaskWords(n_vocab) words from guest
// memory, folding them into the step's combined mask and applying them to
// the logits. sparse allows six tokens, dense every token; none answers 0
// (no mask this step): the call alone.
//
//	go test -run '^$' -bench MaskStage ./host
func BenchmarkMaskStage(b *testing.B) {
	ctx := context.Background()
	h, err := New(ctx, NewConfig())
	require.NoError(b, err)
	defer h.Close(ctx)
	load := func(name string) *Plugin {
		wasm, err := os.ReadFile("testdata/" + name + ".wasm")
		require.NoError(b, err)
		p, err := h.Load(ctx, wasm, LoadOptions{})
		require.NoError(b, err)
		return p
	}
	top, mask := load("topn"), load("mask")
	for _, n := range []int{32000, 151936} {
		logits := make([]float32, n)
		for i := range logits {
			logits[i] = float32(i % 97)
		}
		for _, tc := range []struct {
			name string
			seed uint64
		}{{"sparse", 0}, {"dense", 7}, {"none", 6}} {
			b.Run("vocab="+strconv.Itoa(n)+"/"+tc.name, func(b *testing.B) {
				s, err := NewSampler(benchVocab(n), top, mask)
				require.NoError(b, err)
				defer s.Close()
				require.NoError(b, s.Reset(tc.seed, nil))
				b.ReportAllocs()
				for b.Loop() {
					s.masked = false
					s.Accept(7)
					if err := s.process(s.stages[0], logits); err != nil {
						b.Fatal(err)
					}
					s.accepted = s.accepted[:0]
				}
			})
		}
	}
}
