package engine

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLogSumExp(t *testing.T) {
	inf := float32(math.Inf(-1))
	tests := []struct {
		name   string
		logits []float32
		want   float64
	}{
		{"one", []float32{0}, 0},
		{"two equal", []float32{1, 1}, 1 + math.Ln2},
		{"large values do not overflow", []float32{1000, 1000}, 1000 + math.Ln2},
		{"masked entries count for nothing", []float32{0, inf, inf}, 0},
		{"all masked", []float32{inf, inf}, math.Inf(-1)},
		{"empty", nil, math.Inf(-1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.InDelta(t, tt.want, logSumExp(tt.logits), 1e-9)
		})
	}
}

func TestLogSoftmaxAt(t *testing.T) {
	logits := []float32{1, 0, 0, 0}
	want := 1 - math.Log(math.E+3)
	assert.InDelta(t, want, LogSoftmaxAt(logits, 0), 1e-9)
	var total float64
	for id := range int32(len(logits)) {
		total += math.Exp(LogSoftmaxAt(logits, id))
	}
	assert.InDelta(t, 1, total, 1e-12, "probabilities sum to 1")
}

func TestTopK(t *testing.T) {
	logits := []float32{0.5, 2, -1, 2, 3, 0.5}
	tests := []struct {
		k    int
		want []int32
	}{
		{0, nil},
		{1, []int32{4}},
		{3, []int32{4, 1, 3}},          // tie 1/3 broken by the lower id
		{5, []int32{4, 1, 3, 0, 5}},    // tie 0/5 likewise
		{9, []int32{4, 1, 3, 0, 5, 2}}, // k beyond the vocabulary
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, topK(logits, tt.k), "k=%d", tt.k)
	}
}

func TestStepLogprobs(t *testing.T) {
	logits := []float32{0, 1, 0, 0}
	got := stepLogprobs(logits, 2, 2)
	require.Len(t, got.Top, 2)
	assert.Equal(t, int32(2), got.Token)
	assert.InDelta(t, LogSoftmaxAt(logits, 2), got.Logprob, 1e-6)
	assert.Equal(t, int32(1), got.Top[0].Token)
	assert.InDelta(t, LogSoftmaxAt(logits, 1), got.Top[0].Logprob, 1e-6)
	assert.Equal(t, int32(0), got.Top[1].Token)
	assert.Nil(t, stepLogprobs(logits, 2, 0).Top)
}
