package parity

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/internal/quant"
	"github.com/realizar-host/realizar-host/tools/llamaref/ref"
)

// distribution is a named generator of test rows.
type distribution struct {
	name string
	gen  func(r *rand.Rand, x []float32)
}

// distributions covers what quantizers meet: Gaussian activations, small
// weights with rare outliers, uniform values, sparse rows, values so small
// that the f16 scales are subnormal, all zeros, and rows with constant runs
// (equal values stress the tie-breaking of the searches).
var distributions = []distribution{
	{"normal", func(r *rand.Rand, x []float32) {
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
	}},
	{"weights+outliers", func(r *rand.Rand, x []float32) {
		for i := range x {
			x[i] = float32(0.02 * r.NormFloat64())
			if r.IntN(200) == 0 {
				x[i] *= 20
			}
		}
	}},
	{"uniform", func(r *rand.Rand, x []float32) {
		for i := range x {
			x[i] = float32(2*r.Float64() - 1)
		}
	}},
	{"sparse", func(r *rand.Rand, x []float32) {
		for i := range x {
			if r.IntN(10) < 7 {
				x[i] = 0
			} else {
				x[i] = float32(r.NormFloat64())
			}
		}
	}},
	{"tiny", func(r *rand.Rand, x []float32) {
		for i := range x {
			x[i] = float32(1e-6 * r.NormFloat64())
		}
	}},
	{"zeros", func(r *rand.Rand, x []float32) {
		clear(x)
	}},
	{"positive+runs", func(r *rand.Rand, x []float32) {
		v := float32(r.Float64())
		for i := range x {
			if r.IntN(8) == 0 {
				v = float32(r.Float64() * 3)
			}
			x[i] = v
		}
	}},
}

func rows(d distribution, seed uint64, n int) []float32 {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	x := make([]float32, n)
	d.gen(r, x)
	return x
}

// sameBits reports whether a and b are equal bit for bit, counting any two
// NaNs as equal (payloads may differ between conversions), and the first
// index where they differ (-1 when they do not).
func sameBits(a, b []float32) (bool, int) {
	if len(a) != len(b) {
		return false, min(len(a), len(b))
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) && !(isNaN(a[i]) && isNaN(b[i])) {
			return false, i
		}
	}
	return true, -1
}

func isNaN(f float32) bool { return f != f }

func rmse(x, y []float32) float64 {
	var s float64
	for i := range x {
		d := float64(x[i]) - float64(y[i])
		s += d * d
	}
	return math.Sqrt(s / float64(len(x)))
}

// ourDequant decodes n values of typ with quant.
func ourDequant(t *testing.T, typ uint32, data []byte, n int) []float32 {
	t.Helper()
	out := make([]float32, n)
	require.NoError(t, quant.Dequantize(quant.Type(typ), out, data))
	return out
}

// refDequant decodes n values of typ with ggml's to_float; Q8_1 has none in
// ggml (it is only an activation encoding), so quant decodes it (w = d*q).
func refDequant(t *testing.T, l *ref.Lib, typ uint32, data []byte, n int) []float32 {
	t.Helper()
	if typ == ref.TypeQ8_1 {
		return ourDequant(t, typ, data, n)
	}
	out, err := l.Dequantize(typ, data, n)
	require.NoError(t, err)
	return out
}

// typeName is ggml's name of typ.
func typeName(l *ref.Lib, typ uint32) string {
	if info, err := l.TypeInfo(typ); err == nil {
		return info.Name
	}
	return fmt.Sprintf("type%d", typ)
}

// readTensor reads a tensor's bytes from a GGUF file.
func readTensor(t *testing.T, path string, ti ref.TensorInfo) []byte {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	buf := make([]byte, ti.Size)
	_, err = f.ReadAt(buf, ti.Offset)
	require.NoError(t, err, "%s: tensor %s", path, ti.Name)
	return buf
}

func elements(ti ref.TensorInfo) int {
	n := 1
	for _, d := range ti.Dims {
		n *= int(d)
	}
	return n
}
