//go:build amd64 && !purego

package model

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/realizar-host/realizar-host/internal/testenv"
	"github.com/stretchr/testify/require"
)

// The assembly vector parts of dotF16 and reduceVectors give the Go code's
// bits, for both
// vector widths, padded or not, over lengths around the group boundaries
// and values of wide range (so that any change of association shows).
var useAsmCPU = useAsm

func TestDotF16AsmEqualsGo(t *testing.T) {
	requireAsm(t)
	rng := rand.New(rand.NewPCG(11, 11))
	for _, s := range widths {
		for _, n := range []int{1, 31, 32, 33, 64, 65, 127, 128, 129, 200, 256, 257, 1000} {
			v := randVec(rng, n)
			for i := range v {
				v[i] *= float32(math.Exp2(float64(rng.IntN(24) - 12)))
			}
			x, yb := f16Bytes(v), f16Bytes(randVec(rng, n))
			y := make([]float32, n)
			for i := range y {
				y[i] = f16At(yb, i)
			}
			for _, padded := range []bool{false, true} {
				got := s.dotF16(x, y, n, padded)
				useAsm = false
				want := s.dotF16(x, y, n, padded)
				useAsm = true
				require.Equal(t, math.Float32bits(want), math.Float32bits(got), "lanes %d n %d padded %v", s.lanes, n, padded)
			}
		}
	}
}

// stridedF16Rows returns rows rows of n random f16 values (exponents over
// 2^±12) in x, stride bytes apart with gaps of garbage between them (as
// attention's keys and transposed values lie), and n f16-representable y.
func stridedF16Rows(rng *rand.Rand, n, rows int) (x []byte, stride int, y []float32) {
	stride = 2*n + 2*rng.IntN(9)
	buf := randVec(rng, (rows*stride)/2+n)
	for i := range buf {
		buf[i] *= float32(math.Exp2(float64(rng.IntN(24) - 12)))
	}
	x = f16Bytes(buf)
	yb := f16Bytes(randVec(rng, n))
	y = make([]float32, n)
	for i := range y {
		y[i] = f16At(yb, i)
	}
	return x, stride, y
}

// dotF16Rows gives every row the bits dotF16 gives it alone (the Go loop's
// too), for both widths, padded or not, rows strided through a wider
// buffer (as attention's keys and transposed values are), lengths around
// the vector and group boundaries.
func TestDotF16RowsEqualsDotF16(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 12))
	var pad f16Pad
	for _, s := range widths {
		for _, n := range []int{1, 7, 8, 9, 31, 32, 33, 64, 65, 127, 128, 129, 257} {
			for _, rows := range []int{1, 3, 64} {
				x, stride, y := stridedF16Rows(rng, n, rows)
				for _, padded := range []bool{false, true} {
					got := make([]float32, rows)
					s.dotF16Rows(got, x, stride, y, n, padded, &pad)
					for r := range rows {
						want := s.dotF16(x[r*stride:], y, n, padded)
						useAsm = false
						goWant := s.dotF16(x[r*stride:], y, n, padded)
						useAsm = useAsmCPU
						require.Equal(t, math.Float32bits(want), math.Float32bits(got[r]),
							"lanes %d n %d rows %d row %d padded %v", s.lanes, n, rows, r, padded)
						require.Equal(t, math.Float32bits(goWant), math.Float32bits(got[r]), "against the Go loop")
					}
				}
			}
		}
	}
}

// The assembly swiglu gives the Go loop's bits for the 16-lane and the
// 8-lane build, over ordinary activations and the edges of expf: overflow
// and underflow of the exponent, subnormal results, infinities and NaN.
func TestSwigluAsmEqualsGo(t *testing.T) {
	requireAsm(t)
	for _, lanes := range []int{16, 8} {
		t.Run(fmt.Sprintf("lanes=%d", lanes), func(t *testing.T) { testSwigluAsmEqualsGo(t, simd{lanes: lanes}) })
	}
}

func testSwigluAsmEqualsGo(t *testing.T, s simd) {
	rng := rand.New(rand.NewPCG(12, 12))
	const n = 1<<16 + 13
	gate, up := make([]float32, n), make([]float32, n)
	for i := range gate {
		switch i % 8 {
		case 0, 1, 2:
			gate[i] = float32(rng.NormFloat64() * 4)
		case 3:
			gate[i] = float32(rng.NormFloat64() * 200)
		case 4:
			gate[i] = float32(rng.Float64()*40 - 110) // silu near underflow
		case 5:
			gate[i] = math.Float32frombits(rng.Uint32()) // any bits: NaN, Inf, subnormal
		case 6:
			gate[i] = float32(rng.NormFloat64() * 1e-30)
		case 7:
			gate[i] = []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), 88.7, -88.7, 192.5, -192.5}[rng.IntN(8)]
		}
		up[i] = float32(rng.NormFloat64())
	}
	got := make([]float32, n)
	s.swiglu(got, gate, up)
	useAsm = false
	want := make([]float32, n)
	s.swiglu(want, gate, up)
	useAsm = true
	for i := range want {
		if math.Float32bits(want[i]) != math.Float32bits(got[i]) && !(want[i] != want[i] && got[i] != got[i]) {
			t.Fatalf("gate %v (%#x) up %v: asm %v (%#x), Go %v (%#x)", gate[i], math.Float32bits(gate[i]), up[i],
				got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
		}
	}
	// In place, as the forward calls it.
	copy(got, gate)
	s.swiglu(got, got, up)
	for i := range want {
		if math.Float32bits(want[i]) != math.Float32bits(got[i]) && !(want[i] != want[i] && got[i] != got[i]) {
			t.Fatalf("in place: element %d differs", i)
		}
	}
}

// The assembly softmax exponentials give the Go loop's bits for the
// 8-lane build: scores with masked (-Inf) positions, large negative
// gaps, NaN-free random values, and lengths around the 8-value step.
func TestSoftmaxAsmEqualsGo(t *testing.T) {
	requireAsm(t)
	s := simd{lanes: 8}
	rng := rand.New(rand.NewPCG(13, 13))
	for _, n := range []int{1, 7, 8, 9, 16, 33, 100, 512, 4099} {
		for round := range 20 {
			w := make([]float32, n)
			for i := range w {
				switch rng.IntN(6) {
				case 0:
					w[i] = float32(math.Inf(-1))
				case 1:
					w[i] = float32(rng.NormFloat64() * 100)
				default:
					w[i] = float32(rng.NormFloat64() * 3)
				}
			}
			if round == 0 {
				w[0] = 0 // a zero gap to the max
			}
			got := append([]float32(nil), w...)
			s.softmax(got)
			useAsm = false
			want := append([]float32(nil), w...)
			s.softmax(want)
			useAsm = true
			for i := range want {
				if math.Float32bits(want[i]) != math.Float32bits(got[i]) && !(want[i] != want[i] && got[i] != got[i]) {
					t.Fatalf("n=%d round %d: p[%d] asm %v (%#x), Go %v (%#x)", n, round, i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
				}
			}
		}
	}
}

// roundF16s in assembly has roundF16's bits for every non-NaN input
// (every 1021st float32 bit pattern and lengths around the 8-value step).
func TestRoundF16sAsmEqualsGo(t *testing.T) {
	requireAsm(t)
	var src []float32
	for b := uint64(0); b < 1<<32; b += 1021 {
		if f := math.Float32frombits(uint32(b)); f == f {
			src = append(src, f)
		}
	}
	for _, n := range []int{0, 1, 7, 8, 9, 17, len(src)} {
		got := make([]float32, n)
		roundF16s(got, src[:n])
		for i, f := range src[:n] {
			if want := roundF16(f); math.Float32bits(want) != math.Float32bits(got[i]) {
				t.Fatalf("%#x: asm %#x, Go %#x", math.Float32bits(f), math.Float32bits(got[i]), math.Float32bits(want))
			}
		}
	}
}

// requireAsm skips a test comparing the assembly with the Go loops on a CPU
// without AVX2/F16C, where the Go loop is the only path: locally only, since
// CI runs on an AVX2 machine and a skip there would hide the kernels' test.
func requireAsm(t *testing.T) {
	t.Helper()
	if !useAsm {
		testenv.Missing(t, "no AVX2/F16C on this CPU: the Go loop is the only path")
	}
}

// The assembly of dotF16RowsBatch (llamafile's order) gives the Go loop's
// bits, for both vector widths, row counts around the four-row groups,
// rows strided through a wider buffer, and lengths around the vector
// boundaries (partial vectors zero-padded).
func TestDotF16RowsBatchAsmEqualsGo(t *testing.T) {
	requireAsm(t)
	rng := rand.New(rand.NewPCG(13, 13))
	var pad f16Pad
	for _, s := range widths {
		for _, n := range []int{1, 7, 8, 9, 15, 16, 17, 24, 63, 64, 65, 128, 129, 257} {
			for _, rows := range []int{1, 3, 4, 5, 9, 16, 17, 33, 64} {
				x, stride, y := stridedF16Rows(rng, n, rows)
				got := make([]float32, rows)
				s.dotF16RowsBatch(got, x, stride, y, n, &pad)
				useAsm = false
				want := make([]float32, rows)
				s.dotF16RowsBatch(want, x, stride, y, n, &pad)
				useAsm = true
				for r := range rows {
					require.Equal(t, math.Float32bits(want[r]), math.Float32bits(got[r]), "lanes %d n %d rows %d row %d", s.lanes, n, rows, r)
				}
			}
		}
	}
}

// The AVX-512 probabilities (softmaxF16x16: scale, softmax, f16 rounding
// in one call) give the Go loops' bits for the 16-lane build: scores with
// masked (-Inf) positions, gaps to the maximum that underflow to zero or
// to subnormals, lengths around the 16-value step, and attention's scales.
// Without AVX-512F both sides are the Go loops.
func TestProbsAsmEqualsGo(t *testing.T) {
	requireAsm(t)
	s := simd{lanes: 16}
	rng := rand.New(rand.NewPCG(14, 14))
	for _, n := range []int{1, 15, 16, 17, 31, 32, 33, 100, 256, 513, 4099} {
		for round := range 20 {
			w := make([]float32, n)
			for i := range w {
				switch rng.IntN(7) {
				case 0:
					w[i] = float32(math.Inf(-1))
				case 1:
					w[i] = float32(rng.NormFloat64() * 100)
				case 2:
					w[i] = float32(rng.Float64()*30 - 120) // subnormal and zero probabilities
				default:
					w[i] = float32(rng.NormFloat64() * 3)
				}
			}
			if round == 0 {
				w[0] = 0 // a zero gap to the max
			}
			scale := []float32{0.125, 1, 0.088388346}[round%3]
			got := append([]float32(nil), w...)
			s.probs(got, scale)
			useAsm = false
			want := append([]float32(nil), w...)
			s.probs(want, scale)
			useAsm = useAsmCPU
			for i := range want {
				if math.Float32bits(want[i]) != math.Float32bits(got[i]) {
					t.Fatalf("n=%d round %d: p[%d] of %v: asm %v (%#x), Go %v (%#x)", n, round, i, w[i], got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
				}
			}
		}
	}
}

// RopeNorm's rotation in 512-bit registers (ropeNormZ) gives the Go loop's
// bits: heads of 64 and 128 values (the 16-value vectors) and of 80 with a
// partial rotation of 48 (a multiple of 16 that leaves the rest alone), at
// positions up to a long context, over values of wide range. Without
// AVX-512F both sides are the Go loop.
func TestRopeNormAsmEqualsGo(t *testing.T) {
	requireAsm(t)
	rng := rand.New(rand.NewPCG(15, 15))
	for _, tc := range []struct{ headDim, dims int }{{64, 64}, {128, 128}, {80, 48}} {
		r := newRope(ropeParams{kind: RopeNorm, dims: tc.dims, base: 10000, freqScale: 1, attnFactor: 1}, nil)
		cs := make([]float32, tc.dims)
		for _, pos := range []int{0, 1, 7, 300, 4095, 131071} {
			r.table(cs, pos)
			x := randVec(rng, 4*tc.headDim)
			for i := range x {
				x[i] *= float32(math.Exp2(float64(rng.IntN(24) - 12)))
			}
			got := append([]float32(nil), x...)
			r.apply(got, tc.headDim, cs)
			useAsm = false
			want := append([]float32(nil), x...)
			r.apply(want, tc.headDim, cs)
			useAsm = useAsmCPU
			for i := range want {
				require.Equal(t, math.Float32bits(want[i]), math.Float32bits(got[i]), "headDim %d dims %d pos %d value %d", tc.headDim, tc.dims, pos, i)
			}
		}
	}
}
