//go:build wasip1

// Command goguest is a greedy sampler written in Go, the test suite's Go
// guest: it proves the WASI allow-list is enough for Go's wasip1 runtime and
// measures a Go guest. With config {"top_n": "40"} it asks for the top-40
// candidates and answers the first; otherwise it takes the argmax of the
// full logits. Build with ../build.sh.
package main

import (
	"unsafe"

	"github.com/realizar-host/realizar-host/abi"
)

//go:wasmimport realizar config_get
func configGet(key unsafe.Pointer, keyLen int32, buf unsafe.Pointer, limit int32) int32

// region is the input region: the Go heap does not move objects, so its
// address stays valid while the global holds it.
var (
	region []float32
	topN   int
)

//go:wasmexport realizar_abi_v1_sampler
func marker() {}

//go:wasmexport realizar_init
func initPlugin(nVocab, maxPiece, configPtr, configLen int32) int64 {
	if nVocab <= 0 {
		return int64(abi.ErrVocab)
	}
	key := []byte("top_n")
	var val [8]byte
	if n := configGet(unsafe.Pointer(&key[0]), int32(len(key)), unsafe.Pointer(&val[0]), int32(len(val))); n > 0 {
		for _, c := range val[:min(int(n), len(val))] {
			if c < '0' || c > '9' {
				return int64(abi.ErrConfig)
			}
			topN = 10*topN + int(c-'0')
		}
		if topN < 1 || topN > abi.MaxTopN {
			return int64(abi.ErrConfig)
		}
		region = make([]float32, 2*topN) // ids (as bits), then logits
	} else {
		region = make([]float32, nVocab)
	}
	return abi.PackInit(uint32(uintptr(unsafe.Pointer(&region[0]))), topN)
}

//go:wasmexport realizar_reset
func reset(seed int64, nPrompt int32) int32 { return 0 }

//go:wasmexport realizar_sample
func sample(prev, count int32) int32 {
	if topN > 0 {
		if count <= 0 {
			return -1
		}
		return *(*int32)(unsafe.Pointer(&region[0]))
	}
	if count <= 0 || int(count) > len(region) {
		return -1
	}
	best := int32(0)
	for i, v := range region[1:count] {
		if v > region[best] {
			best = int32(i + 1)
		}
	}
	return best
}

func main() {}
