//go:build wasip1

package main

import (
	"unsafe"

	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/abi/guest"
	"github.com/realizar-host/realizar-host/internal/plugins/sampler/standard"
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
	err := standard.CheckKeys(configBytes(configLen))
	var cfg standard.Config
	if err == nil {
		cfg, err = standard.ReadConfig()
	}
	if err == nil {
		chain, err = standard.NewChain(cfg, nVocab)
	}
	if err != nil {
		guest.LogMsg(abi.LogError, guest.LastLine(err))
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

// config holds the raw config the host writes through realizar_alloc
// before realizar_init.
var config []byte

//go:wasmexport realizar_alloc
func alloc(size int32) int32 {
	config = make([]byte, max(size, 1))
	return int32(guest.Address(&config[0]))
}

// configBytes is the raw config of length n that realizar_init received.
func configBytes(n int32) []byte {
	if n <= 0 || int(n) > len(config) {
		return nil
	}
	return config[:n]
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
