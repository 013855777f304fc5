package host

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
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
		return m, fmt.Errorf("host: manifest: %w", err)
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
	if l.CallTimeoutMs < 0 || l.InitTimeoutMs < 0 || l.MemoryPages > maxMemoryPages {
		return m, fmt.Errorf("host: manifest: limits out of range")
	}
	return m, nil
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
