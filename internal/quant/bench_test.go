package quant_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/realizar-host/realizar-host/internal/quant"
	"github.com/realizar-host/realizar-host/internal/quant/quanttest"
)

// BenchmarkDot measures one 4096-weight row (a 1.1B-class hidden size) for
// every implementation this CPU runs; bytes/s counts the weight row's bytes.
func BenchmarkDot(b *testing.B) {
	const n = 4096
	r := rand.New(rand.NewPCG(1, 1))
	for _, impl := range quant.Implementations() {
		for _, typ := range quanttest.WeightTypes {
			w, act := quanttest.Inputs(typ, n, 0, r)
			f := impl.Dot(typ)
			b.Run(fmt.Sprintf("%s/%v", impl.Name, typ), func(b *testing.B) {
				b.SetBytes(int64(len(w)))
				var sink float32
				for b.Loop() {
					sink += f(w, act, n)
				}
				_ = sink
			})
		}
	}
}

// BenchmarkDotCols measures one 4096-weight row times 16 activation vectors
// (the prefill shape), in both orders, for every implementation this CPU
// runs (with AVX-512 VNNI: its eight-vector kernels and the AVX2 ones);
// bytes/s counts the weight row once per vector, so it compares directly
// with BenchmarkDot.
func BenchmarkDotCols(b *testing.B) {
	const n, cols = 4096, 16
	r := rand.New(rand.NewPCG(1, 1))
	dst := make([]float32, cols)
	for _, impl := range quant.Implementations() {
		for _, typ := range []quant.Type{quant.Q4_K, quant.Q6_K, quant.Q8_0} {
			w, _ := quanttest.Inputs(typ, n, 0, r)
			var acts []byte
			for range cols {
				_, a := quanttest.Inputs(typ, n, 0, r)
				acts = append(acts, a...)
			}
			for _, order := range []struct {
				name string
				f    quant.DotColsFunc
			}{{"plain", impl.DotCols(typ)}, {"amx", impl.DotColsAMX(typ)}} {
				b.Run(fmt.Sprintf("%s/%v/%s", impl.Name, typ, order.name), func(b *testing.B) {
					b.SetBytes(int64(len(w)) * cols)
					for b.Loop() {
						order.f(dst, 1, w, acts, n, cols)
					}
				})
			}
		}
	}
}

// BenchmarkDotColsFew measures one 4096-weight row times a few activation
// vectors (a verify pass of one sequence, or a few sequences decoding
// together) in the plain order, for every implementation this CPU runs;
// acts keeps quant.ColsPadding vectors of room, as the model's buffers do.
// ns/op against cols=1's is what the extra vectors cost. Where the OS has
// a per-thread clock it also reports thread-ns/op, the benchmark thread's
// own CPU time per op (its OS thread locked): on a machine other processes
// load, wall time counts the time they hold the core, and this does not.
func BenchmarkDotColsFew(b *testing.B) {
	const n = 4096
	r := rand.New(rand.NewPCG(1, 1))
	dst := make([]float32, 8)
	for _, impl := range quant.Implementations() {
		for _, typ := range []quant.Type{quant.Q4_K, quant.Q5_K, quant.Q6_K, quant.Q8_0, quant.Q4_0} {
			w, _ := quanttest.Inputs(typ, n, 0, r)
			var acts []byte
			for range 8 + quant.ColsPadding {
				_, a := quanttest.Inputs(typ, n, 0, r)
				acts = append(acts, a...)
			}
			f := impl.DotCols(typ)
			for _, cols := range []int{1, 2, 3, 4, 6, 8} {
				b.Run(fmt.Sprintf("%s/%v/cols=%d", impl.Name, typ, cols), func(b *testing.B) {
					runtime.LockOSThread()
					defer runtime.UnlockOSThread()
					b.SetBytes(int64(len(w)))
					t0, ok := threadTime()
					for b.Loop() {
						f(dst, 1, w, acts, n, cols)
					}
					if t1, _ := threadTime(); ok {
						b.ReportMetric(float64(t1-t0)/float64(b.N), "thread-ns/op")
					}
				})
			}
		}
	}
}

// BenchmarkQuantizeQ8K measures encoding a 4096-value activation; bytes/s
// counts the float32 input.
func BenchmarkQuantizeQ8K(b *testing.B) {
	const n = 4096
	x := gaussRow(n, 1)
	dst := make([]byte, n/256*292)
	for _, impl := range []quant.Kernels{quant.Fast(), quant.Reference()} {
		b.Run(impl.Name, func(b *testing.B) {
			b.SetBytes(4 * n)
			for b.Loop() {
				impl.QuantizeQ8K(dst, x)
			}
		})
	}
}

// BenchmarkDequantize measures decoding a 4096-weight row; bytes/s counts the
// encoded row.
func BenchmarkDequantize(b *testing.B) {
	const n = 4096
	r := rand.New(rand.NewPCG(2, 2))
	y := make([]float32, n)
	for _, typ := range quanttest.WeightTypes {
		w, _ := quanttest.Inputs(typ, n, 0, r)
		b.Run(typ.String(), func(b *testing.B) {
			b.SetBytes(int64(len(w)))
			for b.Loop() {
				_ = quant.Dequantize(typ, y, w)
			}
		})
	}
}

// BenchmarkQuantize measures the reference file quantizers on a 4096-weight
// row; bytes/s counts the float32 input.
func BenchmarkQuantize(b *testing.B) {
	const n = 4096
	x := gaussRow(n, 3)
	for _, typ := range []quant.Type{quant.Q4_K, quant.Q6_K, quant.Q8_0, quant.Q5_0} {
		size, _ := typ.RowSize(n)
		dst := make([]byte, size)
		b.Run(typ.String(), func(b *testing.B) {
			b.SetBytes(4 * n)
			for b.Loop() {
				_ = quant.Quantize(typ, dst, x)
			}
		})
	}
}

// BenchmarkDotPanel measures eight 4096-weight Q4_K rows times 1, 2, 4 and 16
// activation vectors through the panel kernel against the CPU_REPACK-order
// row and batched kernels on the same rows; bytes/s counts the eight rows'
// bytes once per vector (as BenchmarkDot and BenchmarkDotCols do).
func BenchmarkDotPanel(b *testing.B) {
	const n, rows = 4096, 8
	r := rand.New(rand.NewPCG(1, 1))
	typ := quant.Q4_K
	rs, _ := typ.RowSize(n)
	var w []byte
	for range rows {
		wr, _ := quanttest.Inputs(typ, n, 0, r)
		w = append(w, wr...)
	}
	size, _ := quant.PanelSize(typ, rows, n)
	p := make([]byte, size)
	if err := quant.PackPanels(typ, p, w, rows, n); err != nil {
		b.Fatal(err)
	}
	for _, impl := range quant.Implementations() {
		for _, cols := range []int{1, 2, 4, 16} {
			var acts []byte
			for range cols {
				_, a := quanttest.Inputs(typ, n, 0, r)
				acts = append(acts, a...)
			}
			dst := make([]float32, cols*rows)
			b.Run(fmt.Sprintf("%s/panel/cols=%d", impl.Name, cols), func(b *testing.B) {
				b.SetBytes(int64(len(w)) * int64(cols))
				f := impl.DotPanel(typ)
				for b.Loop() {
					f(dst, rows, p, acts, n, cols)
				}
			})
			b.Run(fmt.Sprintf("%s/rows/cols=%d", impl.Name, cols), func(b *testing.B) {
				b.SetBytes(int64(len(w)) * int64(cols))
				f := impl.DotColsRepack(typ)
				for b.Loop() {
					for row := range rows {
						f(dst[row:], rows, w[row*rs:(row+1)*rs], acts, n, cols)
					}
				}
			})
		}
	}
}
