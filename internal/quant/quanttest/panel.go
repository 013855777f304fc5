package quanttest

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/realizar-host/realizar-host/internal/quant"
)

// testDotPanel runs impl's panel kernel against quant.Reference()'s
// DotRepack row kernel on the unpacked rows: one and two panels, 1, 3 and
// 17 blocks, 1 to 13 vectors and 17, 19, realistic and random inputs
// (row r of variant (r+c)%3), a dst stride wider than a panel, and with
// quant.ColsPadding vectors of room past the last; every result must have
// the row kernel's bits, inputs unchanged and guards intact.
func testDotPanel(t *testing.T, impl quant.Kernels) {
	for _, typ := range WeightTypes {
		refRepack, panel := quant.Reference().DotRepack(typ), impl.DotPanel(typ)
		if (refRepack == nil) != (panel == nil) {
			t.Fatalf("%s: panel kernel for %v: present %v, repack row kernel in the reference %v",
				impl.Name, typ, panel != nil, refRepack != nil)
		}
		if panel != nil {
			comparePanel(t, impl.Name, typ, refRepack, panel)
		}
	}
}

func comparePanel(t *testing.T, name string, typ quant.Type, ref quant.DotFunc, panel quant.DotPanelFunc) {
	t.Helper()
	r := rand.New(rand.NewPCG(45, 1))
	for _, rows := range []int{8, 16} {
		for _, nblocks := range []int{1, 3, 17} {
			n := nblocks * typ.BlockSize()
			rs, _ := typ.RowSize(n)
			as, _ := quant.ActivationSize(typ, n)
			w := make([]byte, 0, rows*rs)
			for row := range rows {
				wr, _ := Inputs(typ, n, row%3, r)
				w = append(w, wr...)
			}
			size, err := quant.PanelSize(typ, rows, n)
			if err != nil {
				t.Fatal(err)
			}
			p := newGuarded(size)
			if err := quant.PackPanels(typ, p.b, w, rows, n); err != nil {
				t.Fatal(err)
			}
			p0 := bytes.Clone(p.b)
			for _, nc := range []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 13} {
				a0 := make([]byte, 0, nc*as)
				for c := range nc {
					_, a := Inputs(typ, n, (c+nc)%3, r)
					a0 = append(a0, a...)
				}
				a := newGuarded(len(a0))
				copy(a.b, a0)
				pad := newGuarded(len(a0) + quant.ColsPadding*as)
				copy(pad.b, a0)
				for i := len(a0); i < len(pad.b); i++ {
					pad.b[i] = byte(r.IntN(256))
				}
				const stride = 11
				for _, acts := range []guarded{a, pad} {
					for pi := range rows / quant.PanelRows {
						dst := newGuarded(4 * ((nc-1)*stride + quant.PanelRows))
						f := unsafeFloats(dst.b)
						panel(f, stride, p.b[pi*(n/256)*quant.PanelBlockSize:], acts.b, n, nc)
						for i := range f {
							c, row := i/stride, i%stride
							if row >= quant.PanelRows {
								if math.Float32bits(f[i]) != 0xA5A5A5A5 {
									t.Fatalf("%s %v: panel kernel wrote dst[%d] between its entries", name, typ, i)
								}
								continue
							}
							wr := w[(pi*quant.PanelRows+row)*rs:][:rs]
							want := ref(wr, a0[c*as:(c+1)*as], n)
							if math.Float32bits(want) != math.Float32bits(f[i]) {
								t.Errorf("%s %v n=%d rows=%d panel %d row %d vector %d of %d (padded %v): got %v (%#x), reference %v (%#x)",
									name, typ, n, rows, pi, row, c, nc, len(acts.b) > len(a0), f[i], math.Float32bits(f[i]), want, math.Float32bits(want))
							}
						}
						dst.check(t, "dst")
					}
				}
				a.check(t, "acts")
				pad.check(t, "padded acts")
				if !bytes.Equal(a.b, a0) {
					t.Fatalf("%s %v: panel kernel wrote to its activations", name, typ)
				}
			}
			p.check(t, "panel")
			if !bytes.Equal(p.b, p0) {
				t.Fatalf("%s %v: panel kernel wrote to its panel", name, typ)
			}
		}
	}
}
