//go:build amd64 && !purego

package quant

// The int8 multiply-add peak loops (peak_amd64.s), for BenchmarkInt8Peak:
// they compute nothing anyone reads, only keep the multipliers busy.

// peakVPDPBUSD runs n iterations of 16 independent 512-bit VPDPBUSD (AVX-512
// VNNI): 16·64 = 1024 int8 multiply-adds an iteration. Only with useVNNI.
//
//go:noescape
func peakVPDPBUSD(n int)

// peakVPMADDUBSW runs n iterations of 6 independent 256-bit VPMADDUBSW, each
// added into an int16 accumulator with VPADDW (the AVX2 kernels' inner
// step): 6·32 = 192 int8 multiply-adds an iteration. Only with useAVX2.
//
//go:noescape
func peakVPMADDUBSW(n int)
