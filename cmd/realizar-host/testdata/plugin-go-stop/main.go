//go:build wasip1

package main

import (
	"bytes"

	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/abi/guest"
)

// The host writes each generated token's bytes here.
var piece [256]byte

//go:wasmexport realizar_abi_v1_stop
func marker() {}

//go:wasmexport realizar_init
func initPlugin(nVocab, maxPiece, configPtr, configLen int32) int64 {
	if maxPiece > int32(len(piece)) {
		return int64(abi.ErrVocab)
	}
	return abi.PackInit(guest.Address(&piece), 0) // a stop policy asks for no candidates
}

//go:wasmexport realizar_reset
func reset(seed int64, nPrompt int32) int32 { return 0 }

//go:wasmexport realizar_check
func check(token, n int32) int32 {
	if bytes.IndexByte(piece[:n], '.') >= 0 {
		return abi.PackStop(abi.StopKeep, 0) // the sentence ends with its period
	}
	return abi.PackStop(abi.StopContinue, 0) // nothing held back
}

func main() {}
