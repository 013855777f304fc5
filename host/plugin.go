package host

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/abi/wasmfile"
)

// LoadOptions are what a caller adds to a module's bytes.
type LoadOptions struct {
	// Kind, if not 0, is the kind the caller needs; another kind is ErrKind.
	Kind abi.Kind
	// Config is the plugin's configuration: a JSON object, or empty for none.
	// It is given to the guest at init and through realizar.config_get.
	Config []byte
	// Limits override the Host's defaults field by field.
	Limits Limits
	// MaxConfigBytes, when > 0, replaces the Host's cap on Config
	// (Config.WithMaxConfigBytes) for this load: a caller whose configs
	// come from bounded requests (a server) declares its own bound.
	MaxConfigBytes int
	// Namespace keys the Host's cache of compiled modules: a module
	// loaded in one namespace is compiled apart from the same bytes in
	// another and never found through it, so how long a Load takes tells
	// nothing of what other namespaces loaded. A server gives each tenant
	// its own (the tenant's name) and "" to the modules every tenant may
	// name (the built-ins). Default "": one namespace for everything.
	Namespace string
}

// Plugin is a validated, compiled module with its config and limits. It is
// immutable and safe for concurrent use; each adapter instantiates it.
// It holds its module's compiled code until Close (or until the collector
// finds it unreachable).
type Plugin struct {
	h        *Host
	meta     wasmfile.Meta
	kind     abi.Kind
	sum      [sha256.Size]byte
	mod      *module
	hold     *hold           // on mod's code; nil in a module's base
	cleanup  runtime.Cleanup // releases hold if Close is never called
	config   []byte
	values   map[string][]byte // config_get answers
	limits   Limits
	hasAlloc bool
	memMin   uint32 // declared initial memory, pages
	label    string
}

// Meta is the plugin's metadata section.
func (p *Plugin) Meta() wasmfile.Meta { return p.meta }

// Kind is the plugin's kind.
func (p *Plugin) Kind() abi.Kind { return p.kind }

// ABI is the ABI version the module declares (abi.Version or abi.Version2).
func (p *Plugin) ABI() int { return p.meta.ABI }

// SHA256 is the hex sha256 of the module bytes, the plugin's identity.
func (p *Plugin) SHA256() string { return hex.EncodeToString(p.sum[:]) }

// Limits are the plugin's resolved per-instance limits.
func (p *Plugin) Limits() Limits { return p.limits }

// String names the plugin for errors: "sampler greedy 1.0.0 (sha256 1a2b3c4d5e6f)".
func (p *Plugin) String() string { return p.label }

// Close releases the Plugin's hold on its module's compiled code. The
// code is closed once the module has left the Host's cache (Evict, the
// cache's budget, a module refused) and no other open Plugin or adapter
// of it is left. Adapters made from p keep running; NewSampler and
// NewStopPolicy refuse p (ErrClosed). A Plugin never closed lets go of
// its hold when the collector finds it unreachable. Close is idempotent
// and returns nil.
func (p *Plugin) Close() error {
	if p.hold != nil {
		p.cleanup.Stop()
		p.hold.release()
	}
	return nil
}

// acquire is a hold on p's code for an adapter; ErrClosed once p is.
func (p *Plugin) acquire() (*hold, error) {
	if p.hold == nil || p.hold.done.Load() {
		return nil, fmt.Errorf("%w: plugin %s", ErrClosed, p)
	}
	hd := newHold(p.mod)
	if hd == nil {
		return nil, fmt.Errorf("%w: plugin %s", ErrClosed, p)
	}
	return hd, nil
}

// failure is p's *PluginError in phase, with the last line of log (nil:
// none).
func (p *Plugin) failure(phase string, log *logBuffer, err error) *PluginError {
	e := &PluginError{Plugin: p.label, Phase: phase, Err: err}
	if log != nil {
		e.LastLog, e.Crash = log.lastLine(), log.crashLine()
	}
	return e
}

// LoadFile reads path and loads it; errors name the path.
func (h *Host) LoadFile(ctx context.Context, path string, opts LoadOptions) (*Plugin, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, &LoadError{Source: path, Err: err}
	}
	if st.Size() > int64(h.cfg.maxModuleBytes) {
		return nil, loadErr(path, ErrTooLarge, "%d bytes, cap %d", st.Size(), h.cfg.maxModuleBytes)
	}
	wasm, err := os.ReadFile(path)
	if err != nil {
		return nil, &LoadError{Source: path, Err: err}
	}
	return h.load(ctx, path, wasm, opts)
}

// Load validates wasm, compiles it (once per sha256 while it stays in the
// Host's module cache) and returns the Plugin. Errors are *LoadError wrapping
// ErrTooLarge (also for code past the Config's CodeLimits, a
// *wasmfile.CodeLimitError, or a compilation past its timeout), ctx's
// error, ErrNotWasm, ErrMetadata, ErrABIVersion, ErrKind,
// ErrMissingExport, ErrForbiddenImport, ErrPluginMemory or ErrBadConfig,
// or a *LimitError for opts.Limits out of range (errors.As).
// wasm is not retained. Close the Plugin when done with it (its adapters
// made): a module evicted meanwhile has its code freed then.
func (h *Host) Load(ctx context.Context, wasm []byte, opts LoadOptions) (*Plugin, error) {
	sum := sha256.Sum256(wasm)
	return h.load(ctx, "sha256:"+hex.EncodeToString(sum[:]), wasm, opts)
}

func (h *Host) load(ctx context.Context, src string, wasm []byte, opts LoadOptions) (*Plugin, error) {
	if len(wasm) > h.cfg.maxModuleBytes {
		return nil, loadErr(src, ErrTooLarge, "%d bytes, cap %d", len(wasm), h.cfg.maxModuleBytes)
	}
	parsed, err := wasmfile.Parse(wasm)
	if err != nil {
		return nil, &LoadError{Source: src, Err: fmt.Errorf("%w: %w", ErrNotWasm, err)}
	}
	meta, kind, err := identify(parsed)
	if err != nil {
		return nil, &LoadError{Source: src, Err: err}
	}
	if opts.Kind != 0 && opts.Kind != kind {
		return nil, loadErr(src, ErrKind, "plugin %s is a %s, not a %s", meta.Name, kind, opts.Kind)
	}
	if err := h.checkImports(parsed, meta.ABI); err != nil {
		return nil, &LoadError{Source: src, Err: err}
	}
	if len(parsed.Memories) != 1 {
		return nil, loadErr(src, ErrMissingExport, "a plugin declares exactly one memory (found %d)", len(parsed.Memories))
	}
	for _, name := range requiredExports(kind) {
		if _, ok := parsed.Export(name); !ok {
			return nil, loadErr(src, ErrMissingExport, "%s plugin %s does not export %s", kind, meta.Name, name)
		}
	}
	key := cacheKey{ns: opts.Namespace, sum: sha256.Sum256(wasm)}
	compiled, err := compiledBytes(opts.Namespace, wasm)
	if err != nil {
		return nil, &LoadError{Source: src, Err: fmt.Errorf("%w: %w", ErrNotWasm, err)}
	}
	mod, err := h.compile(ctx, key, compiled)
	if err != nil {
		if errors.Is(err, ErrClosed) || errors.Is(err, ErrTooLarge) || ctx.Err() != nil {
			return nil, &LoadError{Source: src, Err: err}
		}
		return nil, &LoadError{Source: src, Err: fmt.Errorf("%w: %w", ErrNotWasm, err)}
	}
	defer mod.release() // compile's hold; the Plugin takes its own
	if err := checkExportTypes(mod.compiled, kind, meta.ABI); err != nil {
		h.discard(mod) // refused whatever the options: nothing of it is kept
		return nil, &LoadError{Source: src, Err: err}
	}
	_, hasAlloc := mod.compiled.ExportedFunctions()[abi.ExportAlloc]
	base := &Plugin{h: h, meta: meta, kind: kind, sum: key.sum, mod: mod,
		hasAlloc: hasAlloc, memMin: parsed.Memories[0].Min}
	p, err := base.with(src, opts)
	h.mu.Lock()
	unused := mod.base == nil
	if err == nil && unused {
		mod.base = base
	}
	h.mu.Unlock()
	if err != nil && unused && errors.Is(err, ErrPluginMemory) {
		// The module's initial memory is over the limits, and no Plugin
		// of it was made: not kept either. (A bad config is the
		// caller's; the module stays.)
		h.discard(mod)
	}
	return p, err
}

// with returns a copy of a loaded plugin with opts' kind check, limits and
// config applied, and a hold of its own on the module's code, which the
// caller holds already.
func (p *Plugin) with(src string, opts LoadOptions) (*Plugin, error) {
	if opts.Kind != 0 && opts.Kind != p.kind {
		return nil, loadErr(src, ErrKind, "plugin %s is a %s, not a %s", p.meta.Name, p.kind, opts.Kind)
	}
	limits := opts.Limits.or(p.h.cfg.limits)
	if err := limits.check(); err != nil {
		return nil, &LoadError{Source: src, Err: err}
	}
	if p.memMin > limits.MemoryPages {
		return nil, loadErr(src, ErrPluginMemory, "initial memory %d pages, cap %d", p.memMin, limits.MemoryPages)
	}
	maxConfig := p.h.cfg.maxConfigBytes
	if opts.MaxConfigBytes > 0 {
		maxConfig = opts.MaxConfigBytes
	}
	config, values, err := parseConfig(opts.Config, maxConfig)
	if err != nil {
		return nil, &LoadError{Source: src, Err: err}
	}
	hd := newHold(p.mod)
	if hd == nil {
		return nil, loadErr(src, ErrUnknownModule, "its compiled module was dropped meanwhile")
	}
	q := *p
	q.config, q.values, q.limits, q.hold = config, values, limits, hd
	q.cleanup = runtime.AddCleanup(&q, (*hold).release, hd)
	q.label = fmt.Sprintf("%s %s %s (sha256 %s)", q.kind, q.meta.Name, q.meta.Version, q.SHA256()[:12])
	if q.meta.ABI >= abi.Version2 {
		q.label = fmt.Sprintf("%s %s %s (abi %d, sha256 %s)", q.kind, q.meta.Name, q.meta.Version, q.meta.ABI, q.SHA256()[:12])
	}
	return &q, nil
}

// identify reads the metadata section and the marker export and checks
// that they agree: same kind, same ABI version, a version the host accepts.
func identify(mod *wasmfile.Module) (wasmfile.Meta, abi.Kind, error) {
	var markers []string
	for _, e := range mod.Exports {
		if strings.HasPrefix(e.Name, abi.MarkerPrefix) {
			markers = append(markers, e.Name)
		}
	}
	payload, ok := mod.CustomSection(abi.MetaSection)
	if !ok {
		if len(markers) > 0 && !slices.ContainsFunc(markers, isKnownMarker) {
			return wasmfile.Meta{}, 0, fmt.Errorf("%w: marker %s", ErrABIVersion, markers[0])
		}
		return wasmfile.Meta{}, 0, fmt.Errorf("%w: no %s custom section", ErrMetadata, abi.MetaSection)
	}
	meta, err := wasmfile.UnmarshalMeta(payload)
	if err != nil {
		return meta, 0, fmt.Errorf("%w: %w", ErrMetadata, err)
	}
	if !slices.Contains(abi.Versions[:], meta.ABI) {
		return meta, 0, fmt.Errorf("%w: metadata says ABI %d, host speaks %v", ErrABIVersion, meta.ABI, abi.Versions)
	}
	if err := meta.Validate(); err != nil {
		return meta, 0, fmt.Errorf("%w: %w", ErrMetadata, err)
	}
	kind, _ := abi.ParseKind(meta.Kind)
	if kind == abi.KindDrafter && meta.ABI < abi.MinDrafterABI {
		return meta, 0, fmt.Errorf("%w: the drafter kind is ABI %d (the metadata says ABI %d)", ErrABIVersion, abi.MinDrafterABI, meta.ABI)
	}
	marker := kind.MarkerV(meta.ABI)
	switch {
	case slices.Contains(markers, marker):
	case len(markers) > 0 && !slices.ContainsFunc(markers, isKnownMarker):
		return meta, 0, fmt.Errorf("%w: marker %s", ErrABIVersion, markers[0])
	case len(markers) > 0 && slices.ContainsFunc(markers, func(m string) bool { return strings.HasSuffix(m, "_"+kind.String()) }):
		return meta, 0, fmt.Errorf("%w: marker %s, but the metadata says ABI %d", ErrABIVersion, markers[0], meta.ABI)
	default:
		return meta, 0, fmt.Errorf("%w: marker %s (the metadata says %s)", ErrMissingExport, marker, kind)
	}
	if len(markers) > 1 {
		return meta, 0, fmt.Errorf("%w: several marker exports %v", ErrMetadata, markers)
	}
	if e, _ := mod.Export(marker); e.Kind != wasmfile.ExternFunc {
		return meta, 0, fmt.Errorf("%w: marker %s is not a function", ErrMissingExport, marker)
	}
	return meta, kind, nil
}

// isKnownMarker reports whether name is a marker of a version the host accepts.
func isKnownMarker(name string) bool {
	for _, v := range abi.Versions {
		if strings.HasPrefix(name, abi.MarkerPrefix+strconv.Itoa(v)+"_") {
			return true
		}
	}
	return false
}

// v2Imports are the functions of module "realizar" that only a v2 module
// may import.
var v2Imports = []string{abi.ImportTokenAttrs, abi.ImportAcceptedGet}

// checkImports refuses any import that is not a function of the allow-list
// of the module's ABI version with exactly the host's type.
func (h *Host) checkImports(mod *wasmfile.Module, version int) error {
	for _, imp := range mod.Imports {
		if imp.Kind != wasmfile.ExternFunc {
			return fmt.Errorf("%w: %s.%s is not a function (only functions may be imported)", ErrForbiddenImport, imp.Module, imp.Name)
		}
		def, ok := h.allowed[imp.Module+"\x00"+imp.Name]
		if ok && version < abi.Version2 && imp.Module == abi.ImportModule && slices.Contains(v2Imports, imp.Name) {
			return fmt.Errorf("%w: %s.%s is an ABI %d function (the module is ABI %d)", ErrForbiddenImport, imp.Module, imp.Name, abi.Version2, version)
		}
		if !ok {
			return fmt.Errorf("%w: %s.%s", ErrForbiddenImport, imp.Module, imp.Name)
		}
		if !sameTypes(imp.Type.Params, def.ParamTypes()) || !sameTypes(imp.Type.Results, def.ResultTypes()) {
			return fmt.Errorf("%w: %s.%s imported with the wrong type", ErrForbiddenImport, imp.Module, imp.Name)
		}
	}
	return nil
}

func sameTypes(a []byte, b []api.ValueType) bool {
	return bytes.Equal(a, b)
}

func requiredExports(k abi.Kind) []string {
	names := []string{abi.ExportMemory, abi.ExportInit, abi.ExportReset}
	switch k {
	case abi.KindSampler:
		return append(names, abi.ExportSample)
	case abi.KindProcessor:
		return append(names, abi.ExportProcess)
	case abi.KindDrafter:
		return append(names, abi.ExportDraft)
	}
	return append(names, abi.ExportCheck)
}

// exportTypes are the required (and optional) exported function types.
var exportTypes = map[string][2][]api.ValueType{
	abi.ExportInit:    {{i32, i32, i32, i32}, {i64}}, // v1; v2 adds an i64 (initV2Type)
	abi.ExportReset:   {{i64, i32}, {i32}},
	abi.ExportAlloc:   {{i32}, {i32}},
	abi.ExportSample:  {{i32, i32}, {i32}},
	abi.ExportProcess: {{i32, i32}, {i32}},
	abi.ExportCheck:   {{i32, i32}, {i32}},
	abi.ExportDraft:   {{i32, i32, i32, i32}, {i32}},
}

// initV2Type is realizar_init's type from ABI 2: the host's features follow
// v1's four arguments.
var initV2Type = [2][]api.ValueType{{i32, i32, i32, i32, i64}, {i64}}

func checkExportTypes(c wazero.CompiledModule, k abi.Kind, version int) error {
	fns := c.ExportedFunctions()
	if _, ok := c.ExportedMemories()[abi.ExportMemory]; !ok {
		return fmt.Errorf("%w: memory is not exported as %q", ErrMissingExport, abi.ExportMemory)
	}
	for _, name := range append(requiredExports(k)[1:], abi.ExportAlloc) {
		def, ok := fns[name]
		if !ok {
			if name == abi.ExportAlloc {
				continue
			}
			return fmt.Errorf("%w: %s", ErrMissingExport, name)
		}
		want := exportTypes[name]
		if name == abi.ExportInit && version >= abi.Version2 {
			want = initV2Type
		}
		if !slices.Equal(def.ParamTypes(), want[0]) || !slices.Equal(def.ResultTypes(), want[1]) {
			return fmt.Errorf("%w: %s has type %v -> %v, want %v -> %v", ErrMissingExport, name,
				typeNames(def.ParamTypes()), typeNames(def.ResultTypes()), typeNames(want[0]), typeNames(want[1]))
		}
	}
	return nil
}

func typeNames(ts []api.ValueType) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = api.ValueTypeName(t)
	}
	return out
}

// parseConfig checks a config and precomputes config_get's answers: a
// string value unquoted, any other value as compact JSON.
func parseConfig(raw []byte, max int) ([]byte, map[string][]byte, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > max {
		return nil, nil, fmt.Errorf("%w: %d bytes, cap %d", ErrBadConfig, len(raw), max)
	}
	values := map[string][]byte{}
	if len(raw) == 0 {
		return nil, values, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		// Named by JSON type, never encoding/json's Go types: the text
		// may reach a server's client.
		why := "null"
		var syn *json.SyntaxError
		var typ *json.UnmarshalTypeError
		switch {
		case errors.As(err, &syn):
			why = fmt.Sprintf("not valid JSON at byte %d: %v", syn.Offset, syn)
		case errors.As(err, &typ):
			why = "a JSON " + typ.Value
		case err != nil:
			why = "not valid JSON"
		}
		return nil, nil, fmt.Errorf("%w: not a JSON object: %s", ErrBadConfig, why)
	}
	for k, v := range obj {
		// A string is given decoded; anything else, null included (ABI
		// §7), as compact JSON text.
		var s string
		if v = bytes.TrimSpace(v); len(v) > 0 && v[0] == '"' && json.Unmarshal(v, &s) == nil {
			values[k] = []byte(s)
			continue
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, v); err != nil {
			return nil, nil, fmt.Errorf("%w: key %q: %v", ErrBadConfig, k, err)
		}
		values[k] = buf.Bytes()
	}
	return append([]byte(nil), raw...), values, nil
}
