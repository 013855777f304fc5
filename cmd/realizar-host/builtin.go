package main

import (
	"encoding/json"
	"fmt"

	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/abi/wasmfile"
	"github.com/realizar-host/realizar-host/plugins"
)

// Names of the embedded policies run refers to (package plugins, C builds).
const (
	builtinGreedy   = "greedy"
	builtinStandard = "standard"
	builtinStrings  = "strings"
)

// Limits of the embedded strings policy (plugins/stop/strings).
const (
	maxStopStrings = 64
	maxStopLen     = 1024
)

// builtinModule returns the module of an embedded policy, ok false for a
// name that is not one.
func builtinModule(name string) (wasm []byte, ok bool) {
	wasm, err := plugins.Builtin(name)
	return wasm, err == nil
}

// builtinNames lists the embedded policies, for messages.
func builtinNames() []string { return plugins.Names() }

// builtinNamesOf lists the embedded policies of kind ("sampler",
// "processor", "stop"), read from their metadata sections, for help texts.
func builtinNamesOf(kind string) []string {
	var names []string
	for _, name := range plugins.Names() {
		wasm, err := plugins.Builtin(name)
		if err != nil {
			continue
		}
		m, err := wasmfile.Parse(wasm)
		if err != nil {
			continue
		}
		raw, ok := m.CustomSection(abi.MetaSection)
		if !ok {
			continue
		}
		if meta, err := wasmfile.UnmarshalMeta(raw); err == nil && meta.Kind == kind {
			names = append(names, name)
		}
	}
	return names
}

// defaultSampler is the sampler run uses when none is named: llama.cpp's
// default chain.
func defaultSampler() string { return builtinStandard }

// stringsConfig is the embedded strings policy's config for stops:
// {"stop": [...]}, each string trimmed from the output.
func stringsConfig(stops []string) ([]byte, error) {
	if len(stops) > maxStopStrings {
		return nil, fmt.Errorf("at most %d --stop-string values, got %d", maxStopStrings, len(stops))
	}
	for _, s := range stops {
		if n := len(s); n == 0 || n > maxStopLen {
			return nil, fmt.Errorf("--stop-string %q: 1 to %d bytes", s, maxStopLen)
		}
	}
	return json.Marshal(map[string][]string{"stop": stops})
}
