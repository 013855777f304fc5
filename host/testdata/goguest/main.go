//go:build wasip1

// Command goguest is a greedy sampler written in Go, the test suite's Go
// guest: it proves the WASI allow-list is enough for Go's wasip1 runtime and
// measures a Go guest's instantiation. Build with ../build.sh.
package main

import (
	"unsafe"

	"github.com/realizar-host/realizar-host/abi"
)

// logits is the input region: the Go heap does not move objects, so its
// address stays valid while the global holds it.
var logits []float32

//go:wasmexport realizar_abi_v1_sampler
func marker() {}

//go:wasmexport realizar_init
func initPlugin(nVocab, maxPiece, configPtr, configLen int32) int64 {
	if nVocab <= 0 {
		return int64(abi.ErrVocab)
	}
	logits = make([]float32, nVocab)
	return abi.PackInit(uint32(uintptr(unsafe.Pointer(&logits[0]))), 0)
}

//go:wasmexport realizar_reset
func reset(seed int64, nPrompt int32) int32 { return 0 }

//go:wasmexport realizar_sample
func sample(prev, count int32) int32 {
	if count <= 0 || int(count) > len(logits) {
		return -1
	}
	best := int32(0)
	for i, v := range logits[1:count] {
		if v > logits[best] {
			best = int32(i + 1)
		}
	}
	return best
}

func main() {}
