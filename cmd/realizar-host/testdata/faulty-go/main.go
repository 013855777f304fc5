//go:build wasip1

// Command faulty-go is a Go sampler that fails on purpose at its first
// sample, as its config's "fault" says, for the tests of how the host
// reports a guest's failure:
//
//	"nilmap"  a panic: assignment to entry in nil map
//	"oom"     allocates until the runtime dies: fatal error: out of memory
//	"none"    (or absent) answers the top candidate, as plugin-go does
package main

import (
	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/abi/guest"
)

var region = make([]int32, 2)

var (
	fault string
	sink  [][]byte
)

//go:wasmexport realizar_abi_v1_sampler
func marker() {}

//go:wasmexport realizar_init
func initPlugin(nVocab, maxPiece, configPtr, configLen int32) int64 {
	if v, ok := guest.ConfigRaw("fault"); ok {
		fault = string(v)
	}
	return abi.PackInit(guest.Address(&region[0]), 1)
}

//go:wasmexport realizar_reset
func reset(seed int64, nPrompt int32) int32 { return 0 }

//go:wasmexport realizar_sample
func sample(prev, count int32) int32 {
	switch fault {
	case "nilmap":
		var m map[int32]int32
		m[prev] = count
	case "oom":
		for {
			sink = append(sink, make([]byte, 1<<20))
		}
	}
	return region[0]
}

func main() {}
