package parity

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/internal/quant"
	"github.com/realizar-host/realizar-host/tools/llamaref/internal/reftest"
	"github.com/realizar-host/realizar-host/tools/llamaref/ref"
)

// The types a Q4_K_M file can hold, plus Q8_K (activations).
var weightTypes = []uint32{
	ref.TypeF32, ref.TypeF16, ref.TypeBF16, ref.TypeQ4_0, ref.TypeQ5_0, ref.TypeQ8_0,
	ref.TypeQ4_K, ref.TypeQ5_K, ref.TypeQ6_K, ref.TypeQ4_1, ref.TypeQ5_1,
}

// Dequantization of rows quantized by ggml_quantize_chunk equals ggml's
// to_float bit for bit.
func TestDequantizeQuantizedRows(t *testing.T) {
	l := reftest.Lib(t)
	const n = 16 * 256
	for _, typ := range append(weightTypes, ref.TypeQ8_K) {
		t.Run(typeName(l, typ), func(t *testing.T) {
			for i, d := range distributions {
				src := rows(d, uint64(i), n)
				data, err := l.QuantizeRows(typ, src, 256)
				require.NoError(t, err)
				want, err := l.Dequantize(typ, data, n)
				require.NoError(t, err)
				ok, at := sameBits(want, ourDequant(t, typ, data, n))
				assert.True(t, ok, "%s: first difference at value %d", d.name, at)
			}
		})
	}
}

// Dequantization of arbitrary bytes — every scale bit pattern, NaN and Inf
// included — equals ggml's to_float bit for bit (NaN payloads aside).
func TestDequantizeRandomBytes(t *testing.T) {
	l := reftest.Lib(t)
	r := rand.New(rand.NewPCG(7, 7))
	for _, typ := range append(weightTypes, ref.TypeQ8_K) {
		t.Run(typeName(l, typ), func(t *testing.T) {
			info, err := l.TypeInfo(typ)
			require.NoError(t, err)
			n := 64 * info.BlockSize
			if info.BlockSize == 1 {
				n = 1 << 16 // covers every f16/bf16 bit pattern
			}
			data := make([]byte, info.RowSize(n))
			for i := range data {
				data[i] = byte(r.Uint32())
			}
			if info.BlockSize == 1 && info.TypeSize == 2 {
				for i := 0; i < n; i++ {
					data[2*i], data[2*i+1] = byte(i), byte(i>>8)
				}
			}
			want, err := l.Dequantize(typ, data, n)
			require.NoError(t, err)
			ok, at := sameBits(want, ourDequant(t, typ, data, n))
			assert.True(t, ok, "first difference at value %d", at)
		})
	}
}

// quantizerCase compares one of our quantizers with ggml's on the same rows.
type quantizerCase struct {
	typ  uint32
	ours func(dst []byte, x []float32) error
	// theirs encodes x as ggml does: the file quantizer (QuantizeRows) or
	// the CPU backend's activation encoder (QuantizeRowCPU).
	theirs func(l *ref.Lib, typ uint32, x []float32) ([]byte, error)
	what   string
}

func fileQuantizer(l *ref.Lib, typ uint32, x []float32) ([]byte, error) {
	return l.QuantizeRows(typ, x, 256)
}

func cpuQuantizer(l *ref.Lib, typ uint32, x []float32) ([]byte, error) {
	return l.QuantizeRowCPU(typ, x)
}

// refQuantizer is ggml's from_float_ref (for Q8_1, which
// ggml_quantize_chunk does not encode).
func refQuantizer(l *ref.Lib, typ uint32, x []float32) ([]byte, error) {
	return l.QuantizeRow(typ, x)
}

func activation(w quant.Type) func(dst []byte, x []float32) error {
	return func(dst []byte, x []float32) error { return quant.QuantizeActivation(w, dst, x) }
}

// Our quantizers against ggml's on five distributions of 64 rows of 256:
// the count of bit-identical blocks, and where not all are, the RMSE of ours
// over the RMSE of ggml's (reconstruction error against the source). The
// figures go to BENCHMARKS.md; the test holds each type to bit-exactness,
// which quant claims.
func TestQuantizers(t *testing.T) {
	l := reftest.Lib(t)
	cases := []quantizerCase{
		{ref.TypeQ8_0, quant.QuantizeQ8_0, fileQuantizer, "file (quantize_row_q8_0_ref)"},
		{ref.TypeQ5_0, quant.QuantizeQ5_0, fileQuantizer, "file (quantize_row_q5_0_ref)"},
		{ref.TypeQ4_0, quant.QuantizeQ4_0, fileQuantizer, "file (quantize_row_q4_0_ref)"},
		{ref.TypeQ4_1, quant.QuantizeQ4_1, fileQuantizer, "file (quantize_row_q4_1_ref)"},
		{ref.TypeQ5_1, quant.QuantizeQ5_1, fileQuantizer, "file (quantize_row_q5_1_ref)"},
		{ref.TypeQ8_1, quant.QuantizeQ8_1, refQuantizer, "reference (quantize_row_q8_1_ref)"},
		{ref.TypeQ4_K, quant.QuantizeQ4_K, fileQuantizer, "file (quantize_row_q4_K_ref)"},
		{ref.TypeQ5_K, quant.QuantizeQ5_K, fileQuantizer, "file (quantize_row_q5_K_ref)"},
		{ref.TypeQ6_K, quant.QuantizeQ6_K, fileQuantizer, "file (quantize_row_q6_K_ref)"},
		{ref.TypeQ8_K, quant.QuantizeQ8_K, fileQuantizer, "reference (quantize_row_q8_K_ref)"},
		{ref.TypeF16, quant.QuantizeF16, fileQuantizer, "file (ggml_fp32_to_fp16_row)"},
		{ref.TypeBF16, quant.QuantizeBF16, fileQuantizer, "file (ggml_fp32_to_bf16_row_ref)"},
		{ref.TypeQ8_K, activation(quant.Q4_K), cpuQuantizer, "activation for K-quants (CPU from_float)"},
		{ref.TypeQ8_0, activation(quant.Q8_0), cpuQuantizer, "activation for Q4_0/Q5_0/Q8_0 (CPU from_float)"},
		{ref.TypeQ8_1, activation(quant.Q4_1), cpuQuantizer, "activation for Q4_1/Q5_1 (CPU from_float)"},
		{ref.TypeF16, activation(quant.F16), cpuQuantizer, "activation for F16 (CPU from_float)"},
	}
	const nRows, rowLen = 64, 256
	for _, c := range cases {
		info, err := l.TypeInfo(c.typ)
		require.NoError(t, err)
		t.Run(info.Name+" "+c.what, func(t *testing.T) {
			if c.theirs == nil {
				t.Fatal("no reference quantizer")
			}
			if _, err := l.QuantizeRowCPU(c.typ, make([]float32, info.BlockSize)); err != nil && c.what[:4] == "acti" {
				reftest.Missing(t, err)
			}
			for i, d := range distributions {
				src := rows(d, 100+uint64(i), nRows*rowLen)
				want, err := c.theirs(l, c.typ, src)
				require.NoError(t, err)
				got := make([]byte, len(want))
				require.NoError(t, c.ours(got, src))

				blocks := len(want) / info.TypeSize
				same := 0
				for b := 0; b < blocks; b++ {
					if string(got[b*info.TypeSize:(b+1)*info.TypeSize]) == string(want[b*info.TypeSize:(b+1)*info.TypeSize]) {
						same++
					}
				}
				n := len(src)
				theirs := refDequant(t, l, c.typ, want, n)
				ours := refDequant(t, l, c.typ, got, n)
				ratio := 1.0
				if e := rmse(src, theirs); e > 0 {
					ratio = rmse(src, ours) / e
				}
				t.Logf("%-5s %-48s %-17s bit-exact blocks %4d/%4d  RMSE ours/ggml %.6f", info.Name, c.what, d.name, same, blocks, ratio)
				assert.Equal(t, blocks, same, "%s: blocks differing from ggml's", d.name)
			}
		})
	}
}
