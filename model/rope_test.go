package model

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Hand-computed rotations of x = [1 2 3 4] (one head of 4) at position 1
// with base 10000: pair 0 turns by 1 rad, pair 1 by 10000^(-2/4) = 0.01 rad.
func TestRopeHandComputed(t *testing.T) {
	tests := []struct {
		name    string
		kind    RopeType
		factors []float32
		pos     int
		want    []float32
	}{
		{
			// NORM pairs adjacent values: (x0,x1) by 1, (x2,x3) by 0.01.
			name: "norm", kind: RopeNorm, pos: 1,
			want: []float32{-1.1426396637, 1.9220755965, 2.9598506679, 4.0297995017},
		},
		{
			// NEOX pairs values half a head apart: (x0,x2) by 1, (x1,x3) by 0.01.
			name: "neox", kind: RopeNeox, pos: 1,
			want: []float32{-1.9841106486, 1.9599006675, 2.4623779024, 4.0197996683},
		},
		{
			// Llama 3 rope_freqs divide each pair's angle: pair 0 by 2 (0.5 rad).
			name: "norm with factors", kind: RopeNorm, pos: 1, factors: []float32{2, 1},
			want: []float32{-0.0812685153, 2.2345906624, 2.9598506679, 4.0297995017},
		},
		{
			name: "position 0 is the identity", kind: RopeNeox, pos: 0,
			want: []float32{1, 2, 3, 4},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRope(ropeParams{kind: tt.kind, dims: 4, base: 10000, freqScale: 1, attnFactor: 1}, tt.factors)
			cs := make([]float32, 4)
			r.table(cs, tt.pos)
			x := []float32{1, 2, 3, 4}
			r.apply(x, 4, cs)
			assert.InDeltaSlice(t, tt.want, x, 1e-6)
		})
	}
}

// Every head of a multi-head vector turns the same way.
func TestRopeAppliesPerHead(t *testing.T) {
	for _, kind := range []RopeType{RopeNorm, RopeNeox} {
		r := newRope(ropeParams{kind: kind, dims: 4, base: 10000, freqScale: 1, attnFactor: 1}, nil)
		cs := make([]float32, 4)
		r.table(cs, 7)
		x := []float32{1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4}
		r.apply(x, 4, cs)
		require.Equal(t, x[:4], x[4:8], kind.String())
		require.Equal(t, x[:4], x[8:], kind.String())
	}
}

// Linear scaling (freqScale = 1/factor) is the same as a position divided
// by the factor.
func TestRopeLinearScaling(t *testing.T) {
	scaled := newRope(ropeParams{kind: RopeNorm, dims: 8, base: 10000, freqScale: 0.5, attnFactor: 1}, nil)
	plain := newRope(ropeParams{kind: RopeNorm, dims: 8, base: 10000, freqScale: 1, attnFactor: 1}, nil)
	a, b := make([]float32, 8), make([]float32, 8)
	scaled.table(a, 6)
	plain.table(b, 3)
	assert.InDeltaSlice(t, b, a, 1e-6)
}

func TestRopeTypeString(t *testing.T) {
	assert.Equal(t, "norm", RopeNorm.String())
	assert.Equal(t, "neox", RopeNeox.String())
	assert.Equal(t, "invalid", RopeType(9).String())
}
