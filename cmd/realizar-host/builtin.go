package main

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/realizar-host/realizar-host/plugins"
)

// The embedded policies come from package plugins (its C builds). Until
// that package embeds strings, strings is the WAT test guest stopstr of
// host/testdata: it stops at one string (config {"stop": "S"}, 1 to 32
// bytes) and trims it.
//
//go:embed builtin/stopstr.wasm
var stringsWasm []byte

// Names of the embedded policies run refers to.
const (
	builtinGreedy   = "greedy"
	builtinStandard = "standard"
	builtinStrings  = "strings"
)

// builtinModule returns the module of an embedded policy, ok false for a
// name that is not one.
func builtinModule(name string) (wasm []byte, ok bool) {
	if wasm, err := plugins.Builtin(name); err == nil {
		return wasm, true
	}
	if name == builtinStrings {
		return stringsWasm, true
	}
	return nil, false
}

// builtinNames lists the embedded policies, for messages.
func builtinNames() []string {
	names := plugins.Names()
	if !slices.Contains(names, builtinStrings) {
		names = append(names, builtinStrings)
	}
	return names
}

// defaultSampler is the sampler run uses when none is named: llama.cpp's
// default chain.
func defaultSampler() string { return builtinStandard }

// stringsConfig is the embedded strings policy's config for stops.
func stringsConfig(stops []string) ([]byte, error) {
	if len(stops) != 1 {
		return nil, fmt.Errorf("the embedded strings policy takes one --stop-string for now, got %d", len(stops))
	}
	if n := len(stops[0]); n == 0 || n > 32 {
		return nil, fmt.Errorf("--stop-string %q: 1 to 32 bytes", stops[0])
	}
	return json.Marshal(map[string]string{"stop": stops[0]})
}
