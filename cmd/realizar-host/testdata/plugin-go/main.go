//go:build wasip1

// Command plugin-go is the README's Go plugin example: a sampler that asks
// the host for the single most likely candidate (top-N mode, N = 1) and
// answers it, so it never reads the vocabulary-sized logits.
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o top1.wasm .
//	go run ./abi/cmd/wasmmeta -kind sampler -name top1 -version 1.0.0 \
//	    -description "the most likely token" top1.wasm top1-meta.wasm
package main

import (
	"unsafe"

	"github.com/realizar-host/realizar-host/abi"
)

// The host writes the top candidate here each step: its id, then its logit.
var region = make([]int32, 2)

//go:wasmexport realizar_abi_v1_sampler
func marker() {}

//go:wasmexport realizar_init
func initPlugin(nVocab, maxPiece, configPtr, configLen int32) int64 {
	if nVocab <= 0 {
		return int64(abi.ErrVocab)
	}
	return abi.PackInit(uint32(uintptr(unsafe.Pointer(&region[0]))), 1) // top-1 mode
}

//go:wasmexport realizar_reset
func reset(seed int64, nPrompt int32) int32 { return 0 }

//go:wasmexport realizar_sample
func sample(prev, count int32) int32 {
	if count < 1 {
		return -1
	}
	return region[0]
}

func main() {}
