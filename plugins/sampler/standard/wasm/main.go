//go:build wasip1

package main

import (
	"unsafe"

	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/abi/guest"
	"github.com/realizar-host/realizar-host/plugins/sampler/standard"
)

var (
	chain  *standard.Chain
	region []uint32 // top-N: ids then logits; full: logits
	ids    []int32
	logits []float32
	nVocab int
)

//go:wasmexport realizar_abi_v1_sampler
func marker() {}

//go:wasmexport realizar_init
func initPlugin(n, maxPiece, configPtr, configLen int32) int64 {
	if n <= 0 {
		return int64(abi.ErrVocab)
	}
	nVocab = int(n)
	cfg, err := standard.ReadConfig()
	if err == nil {
		chain, err = standard.NewChain(cfg, nVocab)
	}
	if err != nil {
		guest.LogMsg(abi.LogError, err.Error())
		return int64(abi.ErrConfig)
	}
	if t := chain.TopN(); t > 0 {
		region = make([]uint32, 2*t)
		ids = unsafe.Slice((*int32)(unsafe.Pointer(&region[0])), t)
		logits = unsafe.Slice((*float32)(unsafe.Pointer(&region[t])), t)
	} else {
		region = make([]uint32, nVocab)
		logits = unsafe.Slice((*float32)(unsafe.Pointer(&region[0])), nVocab)
	}
	return abi.PackInit(guest.Address(&region[0]), chain.TopN())
}

var prompt []int32

//go:wasmexport realizar_reset
func reset(seed int64, nPrompt int32) int32 {
	prompt = guest.Prompt(prompt)
	chain.Reset(uint64(seed), prompt)
	return 0
}

//go:wasmexport realizar_sample
func sample(prev, count int32) int32 {
	return chain.Sample(prev, ids, logits, int(count))
}

func main() {}
