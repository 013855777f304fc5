//go:build wasip1

package main

import (
	"bytes"

	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/abi/guest"
)

const (
	maxStops   = 64
	maxStopLen = 1024
)

var (
	region  []byte
	stops   [][]byte
	maxLen  int
	include bool
	text    []byte // the last maxLen-1 bytes of the text, then the piece
)

//go:wasmexport realizar_abi_v1_stop
func marker() {}

//go:wasmexport realizar_init
func initPlugin(nVocab, maxPiece, configPtr, configLen int32) int64 {
	if nVocab <= 0 || maxPiece <= 0 {
		return int64(abi.ErrVocab)
	}
	if err := guest.CheckKeys(configBytes(configLen), "stop", "include"); err != nil {
		guest.LogMsg(abi.LogError, guest.LastLine(err))
		return int64(abi.ErrConfig)
	}
	if _, err := guest.ConfigBool("include", &include); err != nil {
		guest.LogMsg(abi.LogError, guest.LastLine(err))
		return int64(abi.ErrConfig)
	}
	list, _, err := guest.ConfigStrings("stop")
	if err != nil || len(list) > maxStops {
		guest.LogMsg(abi.LogError, "strings: stop must be at most 64 strings")
		return int64(abi.ErrConfig)
	}
	for _, s := range list {
		if len(s) > maxStopLen {
			guest.LogMsg(abi.LogError, "strings: a stop string is longer than 1024 bytes")
			return int64(abi.ErrConfig)
		}
		if s != "" {
			stops = append(stops, []byte(s))
			maxLen = max(maxLen, len(s))
		}
	}
	region = make([]byte, maxPiece)
	text = make([]byte, 0, max(maxLen-1, 0)+int(maxPiece))
	return abi.PackInit(guest.Address(&region[0]), 0)
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

//go:wasmexport realizar_reset
func reset(seed int64, nPrompt int32) int32 {
	text = text[:0]
	return 0
}

//go:wasmexport realizar_check
func check(token, n int32) int32 {
	if len(stops) == 0 {
		return abi.PackStop(abi.StopContinue, 0)
	}
	if n < 0 || int(n) > len(region) {
		return int32(abi.ErrFailed)
	}
	if keep := min(len(text), maxLen-1); keep < len(text) {
		copy(text, text[len(text)-keep:])
		text = text[:keep]
	}
	from := len(text)
	text = append(text, region[:n]...)
	at, end := len(text), 0
	for _, s := range stops {
		lo := max(0, from-len(s)+1)
		if i := bytes.Index(text[lo:], s); i >= 0 && lo+i < at {
			at, end = lo+i, lo+i+len(s)
		}
	}
	if at < len(text) {
		cut := at
		if include {
			cut = end
		}
		if len(text) == cut {
			return abi.PackStop(abi.StopKeep, 0)
		}
		return abi.PackStop(abi.StopTrim, len(text)-cut)
	}
	hold := 0
	for _, s := range stops {
		for k := min(len(s)-1, len(text)); k > hold; k-- {
			if bytes.HasSuffix(text, s[:k]) {
				hold = k
				break
			}
		}
	}
	return abi.PackStop(abi.StopContinue, hold)
}

func main() {}
