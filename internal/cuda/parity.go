package cuda

import (
	"fmt"
	"math"

	"github.com/realizar-host/realizar-host/forward"
)

// The parity gate's thresholds and probe length.
const (
	// probeTokens is the number of positions the gate compares.
	probeTokens = 64
	// minCosine: a position whose GPU/CPU cosine is below it rejects the GPU.
	minCosine = 0.95
	// argmaxCosine: below it, a position whose argmax differs rejects the GPU.
	argmaxCosine = 0.98
)

// Verdict is the parity gate's judgement of a device.
type Verdict struct {
	OK        bool    `json:"ok"`
	MinCos    float64 `json:"min_cosine"` // the lowest per-position cosine
	WorstPos  int     `json:"worst_position"`
	Positions int     `json:"positions"` // positions compared
	Reason    string  `json:"reason,omitempty"`
}

// String is one line: "pass (64 positions, min cosine 0.99990 at 12)" or
// "reject: <reason>".
func (v Verdict) String() string {
	if v.OK {
		return fmt.Sprintf("pass (%d positions, min cosine %.5f at %d)", v.Positions, v.MinCos, v.WorstPos)
	}
	return "reject: " + v.Reason
}

// judge compares GPU logits with CPU logits, position by position (gpu[i]
// and cpu[i] are [n_vocab]float32 after the token at position i). It
// rejects when the lengths differ, when a GPU value is not finite, when the
// cosine similarity is below minCosine at any position, or when the argmax
// differs at a position whose cosine is below argmaxCosine.
func judge(gpu, cpu [][]float32) Verdict {
	v := Verdict{OK: true, MinCos: 1, Positions: len(cpu)}
	if len(gpu) != len(cpu) || len(cpu) == 0 {
		return Verdict{Reason: fmt.Sprintf("%d GPU positions, %d CPU positions", len(gpu), len(cpu)), Positions: len(cpu)}
	}
	for i := range cpu {
		g, c := gpu[i], cpu[i]
		if len(g) != len(c) || len(c) == 0 {
			return reject(v, i, fmt.Sprintf("position %d: %d GPU logits, %d CPU logits", i, len(g), len(c)))
		}
		for j, x := range g {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return reject(v, i, fmt.Sprintf("position %d: GPU logit %d is %v", i, j, x))
			}
		}
		cos := cosine(g, c)
		if cos < v.MinCos {
			v.MinCos, v.WorstPos = cos, i
		}
		if !(cos >= minCosine) {
			return reject(v, i, fmt.Sprintf("position %d: cosine %.5f < %.2f", i, cos, minCosine))
		}
		if cos < argmaxCosine {
			if ga, ca := argmax(g), argmax(c); ga != ca {
				return reject(v, i, fmt.Sprintf("position %d: argmax %d (GPU) != %d (CPU) at cosine %.5f < %.2f", i, ga, ca, cos, argmaxCosine))
			}
		}
	}
	return v
}

func reject(v Verdict, pos int, reason string) Verdict {
	v.OK, v.Reason = false, reason
	if pos >= 0 {
		v.WorstPos = pos
	}
	return v
}

// cosine is a·b / (|a||b|) in float64; 0 when either is all zeros.
func cosine(a, b []float32) float64 {
	var ab, aa, bb float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		ab += x * y
		aa += x * x
		bb += y * y
	}
	if aa == 0 || bb == 0 {
		if aa == bb {
			return 1
		}
		return 0
	}
	return ab / math.Sqrt(aa*bb)
}

// argmax is the lowest index of the largest value.
func argmax(x []float32) int {
	best := 0
	for i, v := range x {
		if v > x[best] {
			best = i
		}
	}
	return best
}

// probeSequence is the gate's token sequence for a vocabulary of vocab
// ids: n ids spread over the vocabulary by a fixed multiplicative walk
// (the same on every run).
func probeSequence(vocab, n int) []int32 {
	toks := make([]int32, n)
	x := uint64(1)
	for i := range toks {
		toks[i] = int32(x % uint64(vocab))
		x = x*6364136223846793005 + 1442695040888963407
		x ^= x >> 29
	}
	return toks
}

// stepLogits steps tokens one by one from position 0 and returns a copy of
// the logits after each.
func stepLogits(s forward.Sequence, tokens []int32) ([][]float32, error) {
	s.Reset()
	out := make([][]float32, len(tokens))
	for p, t := range tokens {
		l, err := s.Step(t, p)
		if err != nil {
			return nil, fmt.Errorf("probe position %d: %w", p, err)
		}
		out[p] = append([]float32(nil), l...)
	}
	return out, nil
}

// runGate steps the probe on gpu and cpu, judges the logits, and, when
// gpu is also an forward.Prefiller, checks that a batched prefill of the
// whole probe ends with the same logits as stepping did (within the same
// cosine thresholds). Both steps are Reset afterwards. An error from gpu
// is returned (the device is unusable); an error from cpu too.
func runGate(gpu, cpu forward.Sequence, tokens []int32) (Verdict, error) {
	want, err := stepLogits(cpu, tokens)
	if err != nil {
		return Verdict{}, fmt.Errorf("cuda: gate on cpu: %w", err)
	}
	got, err := stepLogits(gpu, tokens)
	if err != nil {
		return Verdict{}, fmt.Errorf("cuda: gate on gpu: %w", err)
	}
	v := judge(got, want)
	if pf, ok := gpu.(forward.Prefiller); ok && v.OK {
		gpu.Reset()
		l, err := pf.Prefill(tokens, 0)
		if err != nil {
			return Verdict{}, fmt.Errorf("cuda: gate prefill on gpu: %w", err)
		}
		last := len(tokens) - 1
		if pv := judge([][]float32{l}, want[last:]); !pv.OK {
			v = reject(v, last, "batched prefill: "+pv.Reason)
		}
	}
	gpu.Reset()
	cpu.Reset()
	return v, nil
}
