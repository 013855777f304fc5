package plugins

import (
	"embed"
	"errors"
	"fmt"
	"slices"
)

// The embedded modules: the small C (and WAT) builds, a few KiB each;
// greedy, standard and strings are realizar-host's defaults. The Go builds
// (standard-go, strings-go, regex) stay files: each carries a Go runtime
// of a few MiB; grammar, the engine behind --json-schema and --grammar
// (2.9 MiB), is the one Go build embedded.
//
//go:embed wasm/greedy.wasm wasm/standard.wasm wasm/strings.wasm
//go:embed wasm/mirostat-v2.wasm wasm/dry.wasm wasm/repetition.wasm wasm/max-time.wasm wasm/json.wasm
//go:embed wasm/grammar.wasm wasm/lookup.wasm
var builtin embed.FS

// builtinNames are the embedded plugins, in Names order.
var builtinNames = []string{GreedyBuiltin, StandardBuiltin, StringsBuiltin, MirostatV2Builtin, DRYBuiltin,
	repetitionBuiltin, maxTimeBuiltin, JSONBuiltin, GrammarBuiltin, LookupBuiltin}

// ErrUnknown is returned by Builtin for a name that is not embedded.
var ErrUnknown = errors.New("plugins: no such builtin plugin")

// Builtin returns the module bytes of the embedded plugin name ("greedy",
// "standard", ...), a fresh copy. A name that is
// not embedded is an error wrapping ErrUnknown.
func Builtin(name string) ([]byte, error) {
	if !slices.Contains(builtinNames, name) {
		return nil, fmt.Errorf("%w: %q (builtin: %v)", ErrUnknown, name, builtinNames)
	}
	return builtin.ReadFile("wasm/" + name + ".wasm")
}

// Names lists the embedded plugins.
func Names() []string { return slices.Clone(builtinNames) }
