//go:build wasip1

package main

import (
	"strconv"
	"strings"

	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/abi/guest"
)

var (
	nVocab   int32
	base     guest.Mask // built at init
	live     guest.Mask // base at each reset, minus what once denied
	once     bool
	accepted []int32
)

//go:wasmexport realizar_abi_v2_processor
func marker() {}

//go:wasmexport realizar_init
func initPlugin(n, maxPiece, configPtr, configLen int32, features int64) int64 {
	need := abi.FeatureMask | abi.FeatureTokenAttrs | abi.FeatureAccepted
	if abi.Feature(features)&need != need {
		guest.LogMsg(abi.LogError, "the host lacks the mask, token_attrs or accepted feature")
		return int64(abi.ErrFeature)
	}
	if err := guest.CheckKeys(configBytes(configLen), "tokens", "eog", "once"); err != nil {
		guest.LogMsg(abi.LogError, guest.LastLine(err))
		return int64(abi.ErrConfig)
	}
	nVocab = n
	base, live = guest.NewMask(int(n)), guest.NewMask(int(n))
	raw, ok := guest.ConfigRaw("tokens")
	if !ok {
		guest.LogMsg(abi.LogError, "config: tokens is required")
		return int64(abi.ErrConfig)
	}
	if !parseIDs(string(raw)) {
		guest.LogMsg(abi.LogError, "config: tokens must be an array of token ids")
		return int64(abi.ErrConfig)
	}
	eog := true
	if _, err := guest.ConfigBool("eog", &eog); err != nil {
		guest.LogMsg(abi.LogError, guest.LastLine(err))
		return int64(abi.ErrConfig)
	}
	if _, err := guest.ConfigBool("once", &once); err != nil {
		guest.LogMsg(abi.LogError, guest.LastLine(err))
		return int64(abi.ErrConfig)
	}
	if eog {
		attrs := make([]abi.TokenAttr, n)
		if guest.TokenAttrs(0, attrs) != int(n) {
			return int64(abi.ErrFailed)
		}
		for id, a := range attrs {
			if a&abi.AttrEOG != 0 {
				base.Allow(int32(id))
			}
		}
	}
	return abi.PackInitV2(0, 0, abi.OutputMask)
}

// parseIDs sets the bit of each id of the compact JSON array s in base.
func parseIDs(s string) bool {
	s, ok := strings.CutPrefix(strings.TrimSpace(s), "[")
	if s, ok = strings.CutSuffix(s, "]"); !ok {
		return false
	}
	if strings.TrimSpace(s) == "" {
		return true
	}
	for _, f := range strings.Split(s, ",") {
		id, err := strconv.ParseUint(strings.TrimSpace(f), 10, 31)
		if err != nil || int64(id) >= int64(nVocab) {
			guest.LogMsg(abi.LogError, "config: tokens must be ids in [0, n_vocab)")
			return false
		}
		base.Allow(int32(id))
	}
	return true
}

//go:wasmexport realizar_reset
func reset(seed int64, nPrompt int32) int32 {
	copy(live, base)
	return 0
}

//go:wasmexport realizar_process
func process(nAccepted, count int32) int32 {
	if once && nAccepted > 0 {
		accepted = guest.Accepted(accepted, nAccepted)
		for _, t := range accepted {
			if t >= 0 && t < nVocab {
				live.Deny(t)
			}
		}
	}
	return guest.MaskAddress(live)
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

func main() {}
