package quant_test

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/realizar-host/realizar-host/internal/quant"
	"github.com/realizar-host/realizar-host/internal/quant/quanttest"
)

// sameFloat reports whether a and b have the same bits, counting every NaN
// as equal (NaN payloads may depend on operand order).
func sameFloat(a, b float32) bool {
	// A non-finite result (a block scale that is Inf or NaN, or a sum that
	// overflows) is garbage either way: the two paths must agree that it is
	// non-finite, but Inf·0 terms make which non-finite value depend on the
	// association order inside a block (fuzz finding
	// testdata/fuzz/FuzzDot/q5_0-inf-scales: fast -Inf, reference NaN).
	fa, fb := !isFinite(a), !isFinite(b)
	if fa || fb {
		return fa && fb
	}
	return math.Float32bits(a) == math.Float32bits(b)
}

func isFinite(x float32) bool { return !math.IsNaN(float64(x)) && !math.IsInf(float64(x), 0) }

// FuzzDot runs the fast kernel of a weight type against the reference on
// arbitrary bytes: the row length is the largest whole number of blocks both
// buffers hold. Run: go test -run '^$' -fuzz '^FuzzDot$' -fuzztime 30s ./internal/quant/
func FuzzDot(f *testing.F) {
	for i, typ := range quanttest.WeightTypes {
		ws, _ := typ.RowSize(2 * typ.BlockSize())
		as, _ := quant.ActivationSize(typ, 2*typ.BlockSize())
		w, a := make([]byte, ws), make([]byte, as)
		for j := range w {
			w[j] = byte(j * 7)
		}
		for j := range a {
			a[j] = byte(j*13 + i)
		}
		f.Add(uint8(i), w, a)
	}
	f.Fuzz(func(t *testing.T, sel uint8, w, a []byte) {
		typ := quanttest.WeightTypes[int(sel)%len(quanttest.WeightTypes)]
		wsz := typ.TypeSize()
		asz := typ.VecDotType().TypeSize()
		nb := min(len(w)/wsz, len(a)/asz)
		n := nb * typ.BlockSize()
		if typ.VecDotType() == quant.Q8_K {
			// Every Q8_K encoder writes bsums that match the quants.
			for i := range nb {
				b := a[292*i : 292*i+292]
				for j := range 16 {
					sum := 0
					for _, q := range b[4+16*j : 4+16*j+16] {
						sum += int(int8(q))
					}
					binary.LittleEndian.PutUint16(b[260+2*j:], uint16(int16(sum)))
				}
			}
		}
		want := quant.Reference().Dot(typ)(w, a, n)
		got := quant.Fast().Dot(typ)(w, a, n)
		if !sameFloat(want, got) {
			t.Fatalf("%v n=%d: fast %v (%#x), reference %v (%#x)", typ, n, got, math.Float32bits(got), want, math.Float32bits(want))
		}
	})
}

// FuzzQuantizeQ8K runs the fast Q8_K encoder against the reference on
// arbitrary float32 bit patterns (NaN, Inf and subnormals included).
// Run: go test -run '^$' -fuzz '^FuzzQuantizeQ8K$' -fuzztime 30s ./internal/quant/
func FuzzQuantizeQ8K(f *testing.F) {
	seed := make([]byte, 1024)
	for i := range seed {
		seed[i] = byte(i * 31)
	}
	f.Add(seed)
	f.Fuzz(func(t *testing.T, raw []byte) {
		if len(raw) < 4 {
			return
		}
		// Whole blocks, filled by cycling through the input's float32s.
		nb := 1 + len(raw)/1024
		m := len(raw) / 4
		x := make([]float32, 256*nb)
		for i := range x {
			x[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*(i%m):]))
		}
		want := make([]byte, 292*nb)
		got := make([]byte, 292*nb)
		quant.Reference().QuantizeQ8K(want, x)
		quant.Fast().QuantizeQ8K(got, x)
		for i := range want {
			if want[i] != got[i] {
				t.Fatalf("block %d byte %d: fast %d, reference %d", i/292, i%292, got[i], want[i])
			}
		}
	})
}
