package q4k_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/realizar-host/realizar-host/q4k"
	"github.com/realizar-host/realizar-host/q4k/q4ktest"
)

func BenchmarkTmpCols(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, n := range []int{512, 1024, 4096, 8192} {
		for _, cols := range []int{8} {
			for _, impl := range q4k.Implementations()[:2] {
				typ := q4k.Q4_K
				w, _ := q4ktest.Inputs(typ, n, 0, r)
				var acts []byte
				for range cols {
					_, a := q4ktest.Inputs(typ, n, 0, r)
					acts = append(acts, a...)
				}
				dst := make([]float32, cols)
				f := impl.DotColsAMX(typ)
				b.Run(fmt.Sprintf("%s/n=%d/c=%d", impl.Name, n, cols), func(b *testing.B) {
					for b.Loop() {
						f(dst, 1, w, acts, n, cols)
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n/256*cols), "ns/colblock")
				})
			}
		}
	}
}
