package main

import (
	"os"
	"path/filepath"

	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/abi/wasmfile"
	"github.com/realizar-host/realizar-host/host"
	"github.com/realizar-host/realizar-host/internal/plugins"
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

// cliHostConfig is the CLI's host configuration: compiled plugins are kept
// in the user's cache folder (realizar-host/compiled), so that a run does
// not compile the embedded policies again (the grammar processor, a 2.9 MB
// Go guest, takes seconds); in memory when there is no cache folder.
func cliHostConfig() host.Config {
	cfg := host.NewConfig()
	if dir, err := os.UserCacheDir(); err == nil {
		cfg = cfg.WithCompilationCacheDir(filepath.Join(dir, "realizar-host", "compiled"))
	}
	return cfg
}
