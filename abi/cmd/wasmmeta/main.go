// Command wasmmeta writes a plugin's metadata section ("realizar.meta") into
// a built WebAssembly module, replacing any earlier one, so that the same
// module and flags always give the same bytes. Go's linker cannot emit
// custom sections, so `make plugins` runs this after every build.
//
//	go run ./abi/cmd/wasmmeta -kind sampler -name greedy -version 1.0.0 \
//	    -description "argmax" in.wasm out.wasm
//
// -abi 2 writes ABI version 2 metadata, which may carry extension keys:
// each -x x-key=JSON adds one (repeatable; written sorted, compact).
//
// With -print it prints the metadata of in.wasm and writes nothing.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/abi/wasmfile"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "wasmmeta:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("wasmmeta", flag.ContinueOnError)
	var m wasmfile.Meta
	fs.StringVar(&m.Kind, "kind", "", "sampler, processor or stop")
	fs.StringVar(&m.Name, "name", "", "plugin name, [a-z0-9._-]{1,64}")
	fs.StringVar(&m.Version, "version", "", "plugin version")
	fs.StringVar(&m.Description, "description", "", "one line for humans")
	fs.IntVar(&m.ABI, "abi", abi.Version, "ABI version (tests write other values)")
	show := fs.Bool("print", false, "print the metadata of in.wasm and exit")
	fs.Func("x", "an extension key of ABI 2 metadata, x-key=JSON (repeatable)", func(kv string) error {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || !json.Valid([]byte(v)) {
			return fmt.Errorf("-x %q: want x-key=JSON", kv)
		}
		if m.X == nil {
			m.X = map[string]json.RawMessage{}
		}
		m.X[k] = json.RawMessage(v)
		return nil
	})
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *show {
		if fs.NArg() != 1 {
			return fmt.Errorf("usage: wasmmeta -print in.wasm")
		}
		return printMeta(fs.Arg(0))
	}
	if fs.NArg() != 2 {
		return fmt.Errorf("usage: wasmmeta -kind K -name N [-version V] [-description D] in.wasm out.wasm")
	}
	if err := m.Validate(); err != nil {
		return err
	}
	in, err := os.ReadFile(fs.Arg(0))
	if err != nil {
		return err
	}
	payload, err := wasmfile.MarshalMeta(m)
	if err != nil {
		return err
	}
	out, err := wasmfile.SetCustomSection(in, abi.MetaSection, payload)
	if err != nil {
		return fmt.Errorf("%s: %w", fs.Arg(0), err)
	}
	return os.WriteFile(fs.Arg(1), out, 0o644)
}

func printMeta(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	mod, err := wasmfile.Parse(b)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	payload, ok := mod.CustomSection(abi.MetaSection)
	if !ok {
		return fmt.Errorf("%s: no %s section", path, abi.MetaSection)
	}
	fmt.Println(string(payload))
	return nil
}
