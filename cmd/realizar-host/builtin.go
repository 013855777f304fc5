package main

import (
	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/abi/wasmfile"
	"github.com/realizar-host/realizar-host/plugins"
)

// builtinModule returns the module of an embedded policy, ok false for a
// name that is not one.
func builtinModule(name string) (wasm []byte, ok bool) {
	wasm, err := plugins.Builtin(name)
	return wasm, err == nil
}

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
func defaultSampler() string { return plugins.StandardBuiltin }
