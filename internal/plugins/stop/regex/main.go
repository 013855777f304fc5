//go:build wasip1

package main

import (
	"regexp"

	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/abi/guest"
)

var (
	region   []byte
	re       *regexp.Regexp
	holdBack = 32
	include  bool
	window   = 4096
	text     []byte
)

//go:wasmexport realizar_abi_v1_stop
func marker() {}

func fail(msg string) int64 {
	guest.LogMsg(abi.LogError, "regex: "+msg)
	return int64(abi.ErrConfig)
}

//go:wasmexport realizar_init
func initPlugin(nVocab, maxPiece, configPtr, configLen int32) int64 {
	if nVocab <= 0 || maxPiece <= 0 {
		return int64(abi.ErrVocab)
	}
	pat, ok := guest.ConfigRaw("pattern")
	if !ok {
		return fail("config needs a pattern")
	}
	var err error
	if re, err = regexp.Compile(string(pat)); err != nil {
		return fail(err.Error())
	}
	if re.Match(nil) {
		return fail("the pattern matches the empty string")
	}
	if _, err := guest.ConfigInt("hold_back", &holdBack); err != nil || holdBack < 0 || holdBack > abi.MaxStopN {
		return fail("hold_back must be an integer >= 0")
	}
	if _, err := guest.ConfigInt("window", &window); err != nil || window < 1 {
		return fail("window must be an integer >= 1")
	}
	if _, err := guest.ConfigBool("include", &include); err != nil {
		return fail(err.Error())
	}
	region = make([]byte, maxPiece)
	text = make([]byte, 0, window+int(maxPiece))
	return abi.PackInit(guest.Address(&region[0]), 0)
}

//go:wasmexport realizar_reset
func reset(seed int64, nPrompt int32) int32 {
	text = text[:0]
	return 0
}

//go:wasmexport realizar_check
func check(token, n int32) int32 {
	if n < 0 || int(n) > len(region) {
		return int32(abi.ErrFailed)
	}
	if len(text)+int(n) > window {
		drop := min(len(text), len(text)+int(n)-window)
		copy(text, text[drop:])
		text = text[:len(text)-drop]
	}
	text = append(text, region[:n]...)
	if loc := re.FindIndex(text); loc != nil {
		cut := loc[0]
		if include {
			cut = loc[1]
		}
		if cut == len(text) {
			return abi.PackStop(abi.StopKeep, 0)
		}
		return abi.PackStop(abi.StopTrim, len(text)-cut)
	}
	return abi.PackStop(abi.StopContinue, min(holdBack, len(text)))
}

func main() {}
