package quanttest

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/realizar-host/realizar-host/internal/quant"
)

// guard is the number of guard bytes before and after every buffer, and
// guardByte their value.
const (
	guard     = 64
	guardByte = 0xA5
)

// WeightTypes are the weight types every implementation must support (new
// types go at the end: the fuzz corpus selects a type by its index).
var WeightTypes = []quant.Type{quant.Q4_K, quant.Q5_K, quant.Q6_K, quant.Q4_0, quant.Q5_0, quant.Q8_0, quant.F16, quant.BF16, quant.F32, quant.Q4_1, quant.Q5_1}

// Lengths returns the row lengths tested for type t: 1 to 17 blocks for the
// block types, and lengths around the 8-, 32- and 64-lane boundaries for the
// float types.
func Lengths(t quant.Type) []int {
	bs := t.BlockSize()
	if bs == 1 {
		return []int{0, 1, 7, 8, 31, 32, 33, 63, 64, 65, 100, 255, 256, 1000, 4096 + 5}
	}
	return []int{bs, 2 * bs, 3 * bs, 4 * bs, 7 * bs, 8 * bs, 17 * bs}
}

// guarded is a buffer with guard bytes on both sides; b is the usable part,
// with its capacity cut to its length.
type guarded struct {
	all []byte
	b   []byte
}

func newGuarded(n int) guarded {
	all := make([]byte, n+2*guard)
	for i := range all {
		all[i] = guardByte
	}
	return guarded{all: all, b: all[guard : guard+n : guard+n]}
}

func (g guarded) check(t *testing.T, what string) {
	t.Helper()
	n := len(g.b)
	for i, v := range g.all[:guard] {
		if v != guardByte {
			t.Fatalf("%s: guard byte %d before the buffer overwritten", what, guard-i)
		}
	}
	for i, v := range g.all[guard+n:] {
		if v != guardByte {
			t.Fatalf("%s: guard byte %d after the buffer overwritten", what, i)
		}
	}
}

// Inputs returns a weight row and an activation for weight type t and n
// weights. Variant 0 is realistic (values quantized by quant's quantizers);
// variant 1 is random bytes in every quant and scale field (finite scales),
// including the extreme quants -128/0xFF a file could hold; variant 2 is
// extreme magnitudes (scales near the f16 limits, saturated quants).
func Inputs(t quant.Type, n, variant int, r *rand.Rand) (w, act []byte) {
	ws, _ := t.RowSize(n)
	as, _ := quant.ActivationSize(t, n)
	w, act = make([]byte, ws), make([]byte, as)
	switch variant {
	case 0:
		x := make([]float32, n)
		y := make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64() * 0.05)
			y[i] = float32(r.NormFloat64())
		}
		if err := quant.Quantize(t, w, x); err != nil {
			panic(err)
		}
		if err := quant.QuantizeActivation(t, act, y); err != nil {
			panic(err)
		}
	default:
		randomBlocks(t, w, r, variant == 2)
		randomBlocks(t.VecDotType(), act, r, variant == 2)
	}
	return w, act
}

// randomF16 returns random finite binary16 bits; extreme picks large
// magnitudes.
func randomF16(r *rand.Rand, extreme bool) uint16 {
	h := uint16(r.Uint32())
	if extreme {
		h |= 0x7000 // exponent >= 28
	}
	if h&0x7C00 == 0x7C00 {
		h &^= 0x4000
	}
	return h
}

// randomBlocks fills buf with random blocks of type t whose f16/f32 fields
// are finite.
func randomBlocks(t quant.Type, buf []byte, r *rand.Rand, extreme bool) {
	for i := range buf {
		buf[i] = byte(r.Uint32())
		if extreme && r.IntN(2) == 0 {
			buf[i] = 0x80 | byte(r.IntN(2))*0x7F // 0x80 or 0xFF
		}
	}
	bs := t.TypeSize()
	put := func(off int) { binary.LittleEndian.PutUint16(buf[off:], randomF16(r, extreme)) }
	switch t {
	case quant.F32:
		for i := 0; i+4 <= len(buf); i += 4 {
			v := float32(r.NormFloat64())
			if extreme {
				v *= 1e15
			}
			binary.LittleEndian.PutUint32(buf[i:], math.Float32bits(v))
		}
	case quant.F16:
		for i := 0; i+2 <= len(buf); i += 2 {
			put(i)
		}
	case quant.BF16:
		for i := 0; i+2 <= len(buf); i += 2 {
			v := float32(r.NormFloat64())
			if extreme {
				v *= 1e15
			}
			binary.LittleEndian.PutUint16(buf[i:], quant.F32ToBF16(v))
		}
	case quant.Q4_0, quant.Q5_0, quant.Q8_0:
		for i := 0; i < len(buf); i += bs {
			put(i)
		}
	case quant.Q4_1, quant.Q5_1, quant.Q8_1, quant.Q4_K, quant.Q5_K:
		for i := 0; i < len(buf); i += bs {
			put(i)
			put(i + 2)
		}
	case quant.Q6_K:
		for i := 0; i < len(buf); i += bs {
			put(i + 208)
		}
	case quant.Q8_K:
		for i := 0; i < len(buf); i += bs {
			d := float32(r.Float64() * 0.02)
			if extreme {
				d = 1e18
			}
			binary.LittleEndian.PutUint32(buf[i:], math.Float32bits(d))
			for j := range 16 { // bsums consistent with the quants, as every encoder writes them
				sum := 0
				for _, q := range buf[i+4+16*j : i+4+16*j+16] {
					sum += int(int8(q))
				}
				binary.LittleEndian.PutUint16(buf[i+260+2*j:], uint16(int16(sum)))
			}
		}
	}
}

// TestKernels runs impl against quant.Reference(): every weight type in
// WeightTypes, every length in Lengths, three input variants; then the Q8_K
// activation quantizer. Results must be bit-identical, inputs unchanged and
// guards intact.
func TestKernels(t *testing.T, impl quant.Kernels) {
	t.Run("dot", func(t *testing.T) { testDot(t, impl) })
	t.Run("dotCols", func(t *testing.T) { testDotCols(t, impl) })
	t.Run("dotPanel", func(t *testing.T) { testDotPanel(t, impl) })
	t.Run("dotColsBatch", func(t *testing.T) { testDotColsBatch(t, impl) })
	t.Run("quantizeQ8K", func(t *testing.T) { testQuantizeQ8K(t, impl) })
}

// testDot is the dot-product half of TestKernels.
func testDot(t *testing.T, impl quant.Kernels) {
	r := rand.New(rand.NewPCG(42, 1))
	for _, typ := range WeightTypes {
		ref, fast := quant.Reference().Dot(typ), impl.Dot(typ)
		if fast == nil {
			t.Fatalf("%s: no kernel for %v", impl.Name, typ)
		}
		compareDot(t, impl.Name, typ, ref, fast, r)
		refAMX, fastAMX := quant.Reference().DotAMX(typ), impl.DotAMX(typ)
		if (refAMX == nil) != (fastAMX == nil) {
			t.Fatalf("%s: AMX-order kernel for %v: present %v, in the reference %v", impl.Name, typ, fastAMX != nil, refAMX != nil)
		}
		if fastAMX != nil {
			compareDot(t, impl.Name+"/amx", typ, refAMX, fastAMX, r)
		}
		refRepack, fastRepack := quant.Reference().DotRepack(typ), impl.DotRepack(typ)
		if (refRepack == nil) != (fastRepack == nil) {
			t.Fatalf("%s: repack-order kernel for %v: present %v, in the reference %v", impl.Name, typ, fastRepack != nil, refRepack != nil)
		}
		if fastRepack != nil {
			compareDot(t, impl.Name+"/repack", typ, refRepack, fastRepack, r)
		}
	}
}

// compareDot runs fast against ref on every length of typ, with guards.
func compareDot(t *testing.T, name string, typ quant.Type, ref, fast quant.DotFunc, r *rand.Rand) {
	t.Helper()
	for _, n := range Lengths(typ) {
		for variant := range 3 {
			w0, a0 := Inputs(typ, n, variant, r)
			w, a := newGuarded(len(w0)), newGuarded(len(a0))
			copy(w.b, w0)
			copy(a.b, a0)
			want := ref(w.b, a.b, n)
			got := fast(w.b, a.b, n)
			if math.Float32bits(want) != math.Float32bits(got) {
				t.Errorf("%s %v n=%d variant %d: got %v (%#x), reference %v (%#x)",
					name, typ, n, variant, got, math.Float32bits(got), want, math.Float32bits(want))
			}
			w.check(t, "w")
			a.check(t, "act")
			if !bytes.Equal(w.b, w0) || !bytes.Equal(a.b, a0) {
				t.Fatalf("%s %v n=%d: kernel wrote to its inputs", name, typ, n)
			}
		}
	}
}

// testDotCols runs impl's batched kernels against quant.Reference()'s row
// kernels of the same order (DotCols against Dot, DotColsAMX against
// DotAMX, DotColsRepack against DotRepack): every weight type, a few lengths, 1 to 13 vectors and 17, 19
// (so kernels over four and eight vectors meet every tail and each other),
// each vector of a different input
// variant. Every result must have the row kernel's bits, inputs unchanged and
// guards (around dst too) intact.
func testDotCols(t *testing.T, impl quant.Kernels) {
	r := rand.New(rand.NewPCG(44, 1))
	for _, typ := range WeightTypes {
		cols := impl.DotCols(typ)
		if cols == nil {
			t.Fatalf("%s: no batched kernel for %v", impl.Name, typ)
		}
		compareDotCols(t, impl.Name, typ, quant.Reference().Dot(typ), cols, r)
		refAMX, colsAMX := quant.Reference().DotAMX(typ), impl.DotColsAMX(typ)
		if (refAMX == nil) != (colsAMX == nil) {
			t.Fatalf("%s: AMX-order batched kernel for %v: present %v, row kernel in the reference %v",
				impl.Name, typ, colsAMX != nil, refAMX != nil)
		}
		if colsAMX != nil {
			compareDotCols(t, impl.Name+"/amx", typ, refAMX, colsAMX, r)
		}
		refRepack, colsRepack := quant.Reference().DotRepack(typ), impl.DotColsRepack(typ)
		if (refRepack == nil) != (colsRepack == nil) {
			t.Fatalf("%s: repack-order batched kernel for %v: present %v, row kernel in the reference %v",
				impl.Name, typ, colsRepack != nil, refRepack != nil)
		}
		if colsRepack != nil {
			compareDotCols(t, impl.Name+"/repack", typ, refRepack, colsRepack, r)
		}
	}
}

// vectorCounts are the batch widths TestDotCols runs: every count up to
// 13, then 17 (8+8+1) and 19 (8+8+3).
var vectorCounts = []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 17, 19}

// testDotColsBatch runs impl's batched kernels in llamafile's order
// (DotColsBatch) against the reference's, one vector at a time: F16 and
// F32 at lengths that are multiples of 16 (so of both lane counts), the
// vector counts and checks of TestDotCols; every other type has none.
func testDotColsBatch(t *testing.T, impl quant.Kernels) {
	r := rand.New(rand.NewPCG(45, 1))
	for _, typ := range WeightTypes {
		ref, cols := quant.Reference().DotColsBatch(typ), impl.DotColsBatch(typ)
		if (ref == nil) != (cols == nil) {
			t.Fatalf("%s: llamafile-order kernel for %v: present %v, in the reference %v", impl.Name, typ, cols != nil, ref != nil)
		}
		if cols == nil {
			continue
		}
		one := func(w, a []byte, n int) float32 {
			var out [1]float32
			ref(out[:], 1, w, a, n, 1)
			return out[0]
		}
		compareDotColsAt(t, impl.Name+"/llamafile", typ, one, cols, r, []int{0, 16, 64, 272, 3072 + 16})
	}
}

// compareDotCols runs the batched kernel cols against the row kernel ref.
func compareDotCols(t *testing.T, name string, typ quant.Type, ref quant.DotFunc, cols quant.DotColsFunc, r *rand.Rand) {
	t.Helper()
	lengths := Lengths(typ)
	compareDotColsAt(t, name, typ, ref, cols, r, []int{lengths[0], lengths[2], lengths[len(lengths)-1]})
}

// compareDotColsAt is compareDotCols at the row lengths lengths.
func compareDotColsAt(t *testing.T, name string, typ quant.Type, ref quant.DotFunc, cols quant.DotColsFunc, r *rand.Rand, lengths []int) {
	t.Helper()
	for _, n := range lengths {
		for _, nc := range vectorCounts {
			as, _ := quant.ActivationSize(typ, n)
			w0, _ := Inputs(typ, n, nc%3, r)
			a0 := make([]byte, 0, nc*as)
			for c := range nc {
				_, a := Inputs(typ, n, (c+nc)%3, r)
				a0 = append(a0, a...)
			}
			w, a := newGuarded(len(w0)), newGuarded(len(a0))
			copy(w.b, w0)
			copy(a.b, a0)
			const stride = 3
			dst := newGuarded(4 * ((nc-1)*stride + 1))
			got := make([]float32, nc)
			cols(got, 1, w.b, a.b, n, nc)
			for c := range nc {
				want := ref(w.b, a.b[c*as:(c+1)*as], n)
				if math.Float32bits(want) != math.Float32bits(got[c]) {
					t.Errorf("%s %v n=%d vector %d of %d: got %v (%#x), reference %v (%#x)",
						name, typ, n, c, nc, got[c], math.Float32bits(got[c]), want, math.Float32bits(want))
				}
			}
			// The same into every third entry of a guarded dst: only
			// those entries change, to the same bits.
			f := unsafeFloats(dst.b)
			cols(f, stride, w.b, a.b, n, nc)
			for i := range f {
				if i%stride != 0 && math.Float32bits(f[i]) != 0xA5A5A5A5 {
					t.Fatalf("%s %v: batched kernel wrote dst[%d] between its entries", name, typ, i)
				}
				if i%stride == 0 && math.Float32bits(f[i]) != math.Float32bits(got[i/stride]) {
					t.Errorf("%s %v: strided dst[%d] = %v, want %v", name, typ, i, f[i], got[i/stride])
				}
			}
			dst.check(t, "dst")
			// With quant.ColsPadding vectors of room (random bytes) past the
			// last, a tail of two or three may run through the four-vector
			// kernel and one of five to seven through the eight-vector
			// kernel: the same bits, and nothing written past nc entries.
			pad := newGuarded(len(a0) + quant.ColsPadding*as)
			copy(pad.b, a0)
			for i := len(a0); i < len(pad.b); i++ {
				pad.b[i] = byte(r.IntN(256))
			}
			padDst := newGuarded(4 * nc)
			fp := unsafeFloats(padDst.b)
			cols(fp, 1, w.b, pad.b, n, nc)
			for c := range nc {
				if math.Float32bits(fp[c]) != math.Float32bits(got[c]) {
					t.Errorf("%s %v n=%d vector %d of %d with padding: got %v, without %v", name, typ, n, c, nc, fp[c], got[c])
				}
			}
			padDst.check(t, "padded dst")
			pad.check(t, "padded acts")
			w.check(t, "w")
			a.check(t, "acts")
			if !bytes.Equal(w.b, w0) || !bytes.Equal(a.b, a0) {
				t.Fatalf("%s %v n=%d: batched kernel wrote to its inputs", name, typ, n)
			}
		}
	}
}

// testQuantizeQ8K is the activation-quantizer half of TestKernels.
func testQuantizeQ8K(t *testing.T, impl quant.Kernels) {
	r := rand.New(rand.NewPCG(43, 1))
	for _, nb := range []int{1, 2, 3, 5, 16} {
		for variant := range 8 {
			x := make([]float32, 256*nb)
			for i := range x {
				switch variant {
				case 0:
					x[i] = float32(r.NormFloat64())
				case 1: // ties and repeated maxima of both signs
					x[i] = float32(r.IntN(9) - 4)
				case 2: // one zero block, tiny values elsewhere
					if i >= 256 {
						x[i] = float32(r.NormFloat64() * 1e-30)
					}
				case 3: // huge values
					x[i] = float32(r.NormFloat64() * 1e30)
				case 4: // halves: exact .5 ties after scaling
					x[i] = float32(r.IntN(255)-127) / 2
				case 5: // subnormals: -127/max overflows to -Inf
					x[i] = float32(r.NormFloat64() * 1e-42)
				case 6: // infinities
					x[i] = float32(r.NormFloat64())
					if r.IntN(100) == 0 {
						x[i] = float32(math.Inf(1 - 2*r.IntN(2)))
					}
				case 7: // a NaN in the last block
					x[i] = float32(r.NormFloat64())
					if i == len(x)-3 {
						x[i] = float32(math.NaN())
					}
				}
			}
			x0 := append([]float32(nil), x...)
			want := make([]byte, 292*nb)
			quant.Reference().QuantizeQ8K(want, x)
			got := newGuarded(292 * nb)
			impl.QuantizeQ8K(got.b, x)
			got.check(t, "dst")
			if !bytes.Equal(want, got.b) {
				for i := range want {
					if want[i] != got.b[i] {
						t.Errorf("%s quantizeQ8K nb=%d variant %d: byte %d (block %d offset %d) = %d, reference %d",
							impl.Name, nb, variant, i, i/292, i%292, got.b[i], want[i])
						break
					}
				}
			}
			for i := range x {
				if math.Float32bits(x[i]) != math.Float32bits(x0[i]) {
					t.Fatalf("%s quantizeQ8K wrote to its input", impl.Name)
				}
			}
		}
	}
}

// unsafeFloats views b (len a multiple of 4, 4-byte aligned) as float32s, so
// a float destination can sit between guard bytes.
func unsafeFloats(b []byte) []float32 {
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/4)
}
