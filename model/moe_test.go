package model

import (
	"encoding/binary"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/gguf"
)

func TestRoute(t *testing.T) {
	tests := []struct {
		name string
		p    []float32
		used int
		sel  []int32
		w    []float32
	}{
		{"top two, best first", []float32{0.1, 0.4, 0.2, 0.3}, 2, []int32{1, 3}, []float32{0.4 / 0.7, 0.3 / 0.7}},
		{"one used weighs one", []float32{0.25, 0.5, 0.25}, 1, []int32{1}, []float32{1}},
		{"a tie goes to the lower index", []float32{0.2, 0.3, 0.3, 0.2}, 3, []int32{1, 2, 0}, []float32{0.3 / 0.8, 0.3 / 0.8, 0.2 / 0.8}},
		{"a sum below 2^-14 is clamped", []float32{1e-6, 2e-6}, 2, []int32{1, 0}, []float32{2e-6 / minExpertWeightSum, 1e-6 / minExpertWeightSum}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sel, w := make([]int32, tt.used), make([]float32, tt.used)
			route(sel, w, tt.p)
			assert.Equal(t, tt.sel, sel)
			assert.InDeltaSlice(t, tt.w, w, 1e-6)
		})
	}
}

// softmaxRow sums to one and keeps the order of its inputs, for rows of
// whole vectors, a tail only, and both, at both vector widths.
func TestSoftmaxRow(t *testing.T) {
	for _, s := range []simd{{lanes: 8}, {lanes: 16}} {
		for _, n := range []int{3, 8, 16, 19, 128} {
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(math.Sin(float64(i)*1.7)) * 4
			}
			p := append([]float32(nil), x...)
			s.softmaxRow(p)
			var sum float64
			for i := range p {
				sum += float64(p[i])
				for j := range p {
					if x[i] < x[j] {
						assert.LessOrEqual(t, p[i], p[j])
					}
				}
			}
			assert.InDelta(t, 1, sum, 1e-6, "lanes %d n %d", s.lanes, n)
		}
	}
}

// A token's step reads only the experts the router chose: with every other
// expert's weights replaced by NaN, the logits are the same bits.
func TestMoEReadsOnlyChosenExperts(t *testing.T) {
	sp := tinySpec("llama")
	tinyMoE(&sp)
	sp.layers = 1
	m := open(t, sp.write(t), Options{Threads: 2})
	s := m.NewSequence()
	want, err := s.Step(42, 0)
	require.NoError(t, err)
	want = append([]float32(nil), want...)
	chosen := append([]int32(nil), s.moe.sel[:sp.used]...)
	require.Len(t, chosen, 2)

	poisoned := sp
	poisoned.override = map[string]gguf.Tensor{}
	for _, tn := range sp.tensors(t) {
		if !strings.Contains(tn.Name, "_exps.") {
			continue
		}
		data := append([]byte(nil), tn.Data...)
		per := len(data) / sp.experts
		nan := math.Float32bits(float32(math.NaN()))
		for e := range sp.experts {
			if slices.Contains(chosen, int32(e)) {
				continue
			}
			for i := e * per; i < (e+1)*per; i += 4 {
				binary.LittleEndian.PutUint32(data[i:], nan)
			}
		}
		tn.Data = data
		poisoned.override[tn.Name] = tn
	}
	require.Len(t, poisoned.override, 3)
	got, err := open(t, poisoned.write(t), Options{Threads: 2}).NewSequence().Step(42, 0)
	require.NoError(t, err)
	assert.Equal(t, want, got)
}
