package model

import (
	"fmt"
	"sync"
	"testing"
)

// bandwidthBytes is the buffer the memory benchmarks stream: far past
// every cache (a 1.1B Q4_K_M model reads ≈ 640 MB a token).
const bandwidthBytes = 512 << 20

// BenchmarkMemoryRead is the machine's read bandwidth, the limit a
// decode step (which reads every weight once, BenchmarkDecode's MB/s)
// approaches: threads goroutines each sum their share of a 512 MiB buffer
// in 8-byte words. MB/s counts the bytes read.
func BenchmarkMemoryRead(b *testing.B) {
	buf := make([]uint64, bandwidthBytes/8)
	for i := range buf {
		buf[i] = uint64(i)
	}
	for _, threads := range []int{1, 2} {
		b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) {
			b.SetBytes(bandwidthBytes)
			var sink [2]uint64
			for b.Loop() {
				var wg sync.WaitGroup
				per := len(buf) / threads
				for th := range threads {
					wg.Add(1)
					go func(part []uint64, out *uint64) {
						defer wg.Done()
						var s0, s1, s2, s3 uint64
						for i := 0; i+4 <= len(part); i += 4 {
							s0 += part[i]
							s1 += part[i+1]
							s2 += part[i+2]
							s3 += part[i+3]
						}
						*out += s0 + s1 + s2 + s3
					}(buf[th*per:(th+1)*per], &sink[th])
				}
				wg.Wait()
			}
			_ = sink
		})
	}
}

// BenchmarkMemoryCopy is STREAM's copy: threads goroutines copy their
// share of a 512 MiB buffer into another with the runtime's memmove. MB/s
// counts the bytes read and written (2 per byte copied), as STREAM does.
func BenchmarkMemoryCopy(b *testing.B) {
	src, dst := make([]byte, bandwidthBytes), make([]byte, bandwidthBytes)
	for i := range src {
		src[i] = byte(i)
	}
	for _, threads := range []int{1, 2} {
		b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) {
			b.SetBytes(2 * bandwidthBytes)
			for b.Loop() {
				var wg sync.WaitGroup
				per := len(src) / threads
				for th := range threads {
					wg.Add(1)
					go func(d, s []byte) {
						defer wg.Done()
						copy(d, s)
					}(dst[th*per:(th+1)*per], src[th*per:(th+1)*per])
				}
				wg.Wait()
			}
		})
	}
}
