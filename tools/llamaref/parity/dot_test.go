package parity

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/internal/quant"
	"github.com/realizar-host/realizar-host/tools/llamaref/internal/reftest"
	"github.com/realizar-host/realizar-host/tools/llamaref/ref"
)

// dotTolerance bounds |ours - ggml's| relative to sum |w_i * a_i|: the two
// add the same block sums in different orders (ggml's SIMD lanes), so only
// float32 rounding of the accumulation may differ — a few ulps of the sum of
// magnitudes, far below 1e-5.
const dotTolerance = 1e-5

// ggmlOrderTypes are the types whose plain row kernels (Kernels.Dot) sum in
// the order of ggml's x86 AVX2/AVX-512 builds (see quant's order.go), so they
// must equal ggml_vec_dot_* bit for bit wherever those builds run.
var ggmlOrderTypes = map[uint32]bool{
	ref.TypeQ4_0: true, ref.TypeQ5_0: true, ref.TypeQ8_0: true, ref.TypeF16: true,
	ref.TypeQ4_K: true, ref.TypeQ5_K: true, ref.TypeQ6_K: true, ref.TypeF32: true,
}

// dotLengths are the row lengths compared for a type of block size bs:
// 1024, and for the float types lengths with a tail past ggml's SIMD steps
// (172 is stories260K's ffn_down row).
func dotLengths(bs int) []int {
	if bs == 1 {
		return []int{1024, 172, 100, 63}
	}
	if bs == 32 {
		return []int{1024, 96}
	}
	return []int{1024}
}

// Our row dot products (the reference loops and this build's fast path)
// against the CPU backend's ggml_vec_dot_* on rows quantized by ggml and
// activations encoded by the backend's from_float. Prints the bit-exact
// count and the largest relative difference.
func TestDotProducts(t *testing.T) {
	l := reftest.Lib(t)
	if l.CPUBackend() == "" {
		reftest.Missing(t, ref.ErrNoCPUBackend)
	}
	t.Logf("ggml CPU backend: %s", l.CPUBackend())
	const nRows = 32
	types := []uint32{ref.TypeQ4_K, ref.TypeQ5_K, ref.TypeQ6_K, ref.TypeQ4_0, ref.TypeQ4_1, ref.TypeQ5_0, ref.TypeQ5_1, ref.TypeQ8_0, ref.TypeF16, ref.TypeBF16, ref.TypeF32}
	impls := []quant.Kernels{quant.Reference()}
	if quant.Fast().Name != quant.Reference().Name {
		impls = append(impls, quant.Fast())
	}
	for _, kernels := range impls {
		for _, typ := range types {
			name := typeName(l, typ)
			t.Run(kernels.Name+"/"+name, func(t *testing.T) {
				dot := kernels.Dot(quant.Type(typ))
				require.NotNil(t, dot)
				vt, err := l.VecDotType(typ)
				require.NoError(t, err)
				require.Equal(t, uint32(quant.Type(typ).VecDotType()), vt, "vec_dot_type")
				wInfo, err := l.TypeInfo(typ)
				require.NoError(t, err)
				aInfo, err := l.TypeInfo(vt)
				require.NoError(t, err)
				exact, total, worst := 0, 0, 0.0
				for _, rowLen := range dotLengths(wInfo.BlockSize) {
					for i, d := range distributions[:4] {
						w, err := l.QuantizeRows(typ, rows(d, 200+uint64(i), nRows*rowLen), rowLen)
						require.NoError(t, err)
						wf, err := l.Dequantize(typ, w, nRows*rowLen)
						require.NoError(t, err)
						a, err := l.QuantizeRowCPU(vt, rows(distributions[0], 300+uint64(i), rowLen))
						require.NoError(t, err)
						af := refDequant(t, l, vt, a, rowLen)
						for r := 0; r < nRows; r++ {
							wr := w[r*wInfo.RowSize(rowLen) : (r+1)*wInfo.RowSize(rowLen)]
							want, err := l.VecDot(typ, rowLen, wr, a)
							require.NoError(t, err)
							got := dot(wr, a[:aInfo.RowSize(rowLen)], rowLen)
							var mag float64
							for j := 0; j < rowLen; j++ {
								mag += math.Abs(float64(wf[r*rowLen+j]) * float64(af[j]))
							}
							total++
							if math.Float32bits(got) == math.Float32bits(want) {
								exact++
							}
							if mag > 0 {
								worst = math.Max(worst, math.Abs(float64(got)-float64(want))/mag)
							}
						}
					}
				}
				t.Logf("%-9s %-5s · %-5s bit-exact %3d/%3d  max |ours-ggml|/sum|w·a| %.2e", kernels.Name, name, aInfo.Name, exact, total, worst)
				assert.LessOrEqual(t, worst, dotTolerance)
				if ggmlOrderTypes[typ] && quant.Fast().Name == "avx2" {
					assert.Equal(t, total, exact, "ggml's order: every dot product bit for bit")
				}
			})
		}
	}
}
