//go:build amd64 && !purego

package quant

import "testing"

// BenchmarkInt8Peak is one core's int8 multiply-add peak, the ceiling a
// compute-bound product (prefill) is measured against: long runs of
// independent multiply-adds on registers, no memory. "GMAC/s" is 10⁹ int8
// products (each added into a sum) a second. avx512vnni is 512-bit
// VPDPBUSD, run where the CPU has AVX-512 VNNI (useVNNI); avx2 is 256-bit
// VPMADDUBSW with a VPADDW, the AVX2 kernels' step, run with AVX2. A CPU
// without them runs neither (there is no int8 path to measure).
func BenchmarkInt8Peak(b *testing.B) {
	const iters = 1 << 16
	for _, k := range []struct {
		name   string
		ok     bool
		macs   int // per iteration
		kernel func(int)
	}{
		{"avx512vnni", useVNNI, 16 * 64, peakVPDPBUSD},
		{"avx2", useAVX2, 6 * 32, peakVPMADDUBSW},
	} {
		if !k.ok {
			continue
		}
		b.Run(k.name, func(b *testing.B) {
			for b.Loop() {
				k.kernel(iters)
			}
			b.ReportMetric(float64(b.N)*iters*float64(k.macs)/b.Elapsed().Seconds()/1e9, "GMAC/s")
		})
	}
}
