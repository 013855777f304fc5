package main

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
)

// The embedded policies. Until package plugins (the C builds of greedy,
// standard and strings) is merged, greedy and strings are the WAT test
// guests of host/testdata: greedy is the same argmax, strings stops at one
// string (config {"stop": "S"}, at most 32 bytes), and there is no standard.
var (
	//go:embed builtin/greedy.wasm
	greedyWasm []byte
	//go:embed builtin/stopstr.wasm
	stringsWasm []byte
)

// Names of the embedded policies.
const (
	builtinGreedy   = "greedy"
	builtinStandard = "standard"
	builtinStrings  = "strings"
)

// builtinModule returns the module of an embedded policy, ok false for a
// name that is not one.
func builtinModule(name string) (wasm []byte, ok bool) {
	switch name {
	case builtinGreedy:
		return greedyWasm, true
	case builtinStrings:
		return stringsWasm, true
	}
	return nil, false
}

// builtinNames lists the embedded policies, for messages.
func builtinNames() []string {
	var names []string
	for _, n := range []string{builtinGreedy, builtinStandard, builtinStrings} {
		if _, ok := builtinModule(n); ok {
			names = append(names, n)
		}
	}
	return names
}

// defaultSampler is the sampler run uses when none is named: llama.cpp's
// default chain when it is embedded, else greedy.
func defaultSampler() string {
	if slices.Contains(builtinNames(), builtinStandard) {
		return builtinStandard
	}
	return builtinGreedy
}

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
