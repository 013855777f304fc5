package host

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/realizar-host/realizar-host/abi"
)

// Manifest is a plugin's JSON manifest:
//
//	{
//	  "path": "greedy.wasm",            // relative to the manifest's folder
//	  "sha256": "9f86d0…",              // optional pin; alone, names a module already loaded
//	  "kind": "sampler",                // optional; another kind is ErrKind
//	  "config": {"temperature": 0.7},   // optional JSON object
//	  "limits": {"memory_pages": 512, "call_timeout_ms": 250, "init_timeout_ms": 2000}
//	}
//
// At least one of path and sha256 is given. Unknown keys are an error.
type Manifest struct {
	Path   string          `json:"path,omitempty"`
	SHA256 string          `json:"sha256,omitempty"`
	Kind   string          `json:"kind,omitempty"`
	Config json.RawMessage `json:"config,omitempty"`
	Limits ManifestLimits  `json:"limits"`
}

// ManifestLimits is Limits in a manifest's units; 0 keeps the Host default.
type ManifestLimits struct {
	MemoryPages   uint32 `json:"memory_pages,omitempty"`
	CallTimeoutMs int    `json:"call_timeout_ms,omitempty"`
	InitTimeoutMs int    `json:"init_timeout_ms,omitempty"`
}

// ParseManifest decodes and checks a manifest.
func ParseManifest(b []byte) (Manifest, error) {
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return m, manifestJSONError(err)
	}
	if dec.More() {
		return m, fmt.Errorf("host: manifest: trailing data")
	}
	if m.Path == "" && m.SHA256 == "" {
		return m, fmt.Errorf("host: manifest: neither path nor sha256")
	}
	if m.SHA256 != "" {
		if s, err := hex.DecodeString(m.SHA256); err != nil || len(s) != sha256.Size {
			return m, fmt.Errorf("host: manifest: sha256 %q is not 64 hex digits", m.SHA256)
		}
		m.SHA256 = strings.ToLower(m.SHA256)
	}
	if m.Kind != "" {
		if _, ok := abi.ParseKind(m.Kind); !ok {
			return m, fmt.Errorf("host: manifest: kind %q", m.Kind)
		}
	}
	l := m.Limits
	var bad *LimitError
	switch {
	case l.MemoryPages > MaxMemoryPages:
		bad = &LimitError{Key: "limits.memory_pages", Value: strconv.FormatUint(uint64(l.MemoryPages), 10), Range: fmt.Sprintf("0 (the default) to %d", MaxMemoryPages)}
	case l.CallTimeoutMs < 0:
		bad = &LimitError{Key: "limits.call_timeout_ms", Value: strconv.Itoa(l.CallTimeoutMs), Range: "0 (the default) or more"}
	case l.InitTimeoutMs < 0:
		bad = &LimitError{Key: "limits.init_timeout_ms", Value: strconv.Itoa(l.InitTimeoutMs), Range: "0 (the default) or more"}
	}
	if bad != nil {
		return m, fmt.Errorf("host: manifest: %w", bad)
	}
	return m, nil
}

// LimitError is a limit outside the values it may take, in the terms of
// the file that set it: Key is the limit's key there
// ("limits.memory_pages" in a manifest, "step_deadline" in a tenants
// file, "Limits.MemoryPages" from the Go API: LoadOptions or
// Config.WithLimits), Value the value given ("70000", "-5ms") and Range the values
// allowed ("0 (the default) to 65536"). Callers find it with errors.As.
type LimitError struct {
	Key, Value, Range string
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("%s %s is out of range: %s", e.Key, e.Value, e.Range)
}

// manifestKeys are a manifest's keys, as its errors list them.
const manifestKeys = "path, sha256, kind, config, limits (memory_pages, call_timeout_ms, init_timeout_ms)"

// manifestJSONError is a manifest's decoding error in the manifest's own
// terms — its keys and JSON's types, never the Go types it decodes into
// (encoding/json names host.Manifest).
func manifestJSONError(err error) error {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te) && te.Field == "":
		return fmt.Errorf("host: manifest: not a JSON object but %s", jsonValue(te.Value))
	case errors.As(err, &te):
		want := "an object"
		switch te.Type.Kind() {
		case reflect.String:
			want = "a string"
		case reflect.Int, reflect.Uint32:
			want = "a non-negative integer"
		}
		return fmt.Errorf("host: manifest: %s must be %s, not %s", te.Field, want, jsonValue(te.Value))
	case errors.As(err, &se):
		return fmt.Errorf("host: manifest: not JSON (byte %d): %v", se.Offset, se)
	case errors.Is(err, io.EOF):
		return errors.New("host: manifest: empty, not a JSON object")
	}
	if key, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return fmt.Errorf("host: manifest: unknown key %s (the keys are %s)", key, manifestKeys)
	}
	return fmt.Errorf("host: manifest: %w", err)
}

// jsonValue is an UnmarshalTypeError's Value ("array", "number -1") with
// its article: "an array", "the number -1".
func jsonValue(v string) string {
	switch {
	case strings.HasPrefix(v, "number "):
		return "the " + v
	case v == "array" || v == "object":
		return "an " + v
	}
	return "a " + v
}

// LoadOptions converts the manifest's kind, config and limits.
func (m Manifest) LoadOptions() LoadOptions {
	kind, _ := abi.ParseKind(m.Kind)
	return LoadOptions{
		Kind:   kind,
		Config: m.Config,
		Limits: Limits{
			MemoryPages: m.Limits.MemoryPages,
			CallTimeout: time.Duration(m.Limits.CallTimeoutMs) * time.Millisecond,
			InitTimeout: time.Duration(m.Limits.InitTimeoutMs) * time.Millisecond,
		},
	}
}

// LoadManifest reads the manifest at path and loads its module: from its
// path (checked against the sha256 pin when both are given,
// ErrHashMismatch otherwise), or, with only a pin, a module this Host has
// already loaded (ErrUnknownModule if none).
func (h *Host) LoadManifest(ctx context.Context, path string) (*Plugin, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, &LoadError{Source: path, Err: err}
	}
	m, err := ParseManifest(b)
	if err != nil {
		return nil, &LoadError{Source: path, Err: err}
	}
	opts := m.LoadOptions()
	if m.Path == "" {
		return h.loadKnown(ctx, "sha256:"+m.SHA256, m.SHA256, opts)
	}
	wasmPath := m.Path
	if !filepath.IsAbs(wasmPath) {
		wasmPath = filepath.Join(filepath.Dir(path), wasmPath)
	}
	wasm, err := os.ReadFile(wasmPath)
	if err != nil {
		return nil, &LoadError{Source: path, Err: err}
	}
	if m.SHA256 != "" {
		sum := sha256.Sum256(wasm)
		if got := hex.EncodeToString(sum[:]); got != m.SHA256 {
			return nil, loadErr(wasmPath, ErrHashMismatch, "file has %s, manifest pins %s", got, m.SHA256)
		}
	}
	return h.load(ctx, wasmPath, wasm, opts)
}

// loadKnown makes a Plugin from a module already loaded, with new options.
func (h *Host) loadKnown(ctx context.Context, src, sum string, opts LoadOptions) (*Plugin, error) {
	key := cacheKey{ns: opts.Namespace}
	_, _ = hex.Decode(key.sum[:], []byte(sum)) // checked by ParseManifest
	h.mu.Lock()
	var known *Plugin
	if m, ok := h.modules.Get(key); ok && m.base != nil {
		known = m.base
		m.acquire() // open: the cache holds it
	}
	h.mu.Unlock()
	if known == nil {
		return nil, loadErr(src, ErrUnknownModule, "no module with this sha256 has been loaded")
	}
	defer known.mod.release()
	return known.with(src, opts)
}
