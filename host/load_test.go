package host_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/engine/enginetest"
	"github.com/realizar-host/realizar-host/host"
)

// The load-time half of the bad-plugin suite: each module is refused with
// its sentinel, as a *host.LoadError naming the module.
func TestLoadRefuses(t *testing.T) {
	h := newHost(t, host.NewConfig())
	big := `{"blob":"` + strings.Repeat("x", host.DefaultMaxConfigBytes) + `"}`
	for _, tc := range []struct {
		module string
		opts   host.LoadOptions
		want   error
	}{
		{"notwasm", host.LoadOptions{}, host.ErrNotWasm},
		{"badversion", host.LoadOptions{}, host.ErrABIVersion},
		{"nometa", host.LoadOptions{}, host.ErrMetadata},
		{"nomarker", host.LoadOptions{}, host.ErrMissingExport},
		{"nosample", host.LoadOptions{}, host.ErrMissingExport},
		{"badtype", host.LoadOptions{}, host.ErrMissingExport},
		{"pathopen", host.LoadOptions{}, host.ErrForbiddenImport},
		{"sockaccept", host.LoadOptions{}, host.ErrForbiddenImport},
		{"madeup", host.LoadOptions{}, host.ErrForbiddenImport},
		{"logtype", host.LoadOptions{}, host.ErrForbiddenImport},
		{"importmem", host.LoadOptions{}, host.ErrForbiddenImport},
		{"greedy", host.LoadOptions{Config: []byte(big)}, host.ErrBadConfig},
		{"greedy", host.LoadOptions{Config: []byte(`[1,2]`)}, host.ErrBadConfig},
		{"greedy", host.LoadOptions{Config: []byte(`{"a":`)}, host.ErrBadConfig},
		{"greedy", host.LoadOptions{Kind: abi.KindStop}, host.ErrKind},
		{"bad", host.LoadOptions{Limits: host.Limits{MemoryPages: 1}}, host.ErrPluginMemory},
	} {
		t.Run(tc.module, func(t *testing.T) {
			_, err := h.Load(context.Background(), wasmFile(t, tc.module), tc.opts)
			require.ErrorIs(t, err, tc.want)
			var le *host.LoadError
			require.True(t, errors.As(err, &le))
			assert.True(t, strings.HasPrefix(le.Source, "sha256:"), le.Source)
		})
	}
	// The Host is still usable after every refusal.
	p := load(t, h, "greedy", host.LoadOptions{})
	assert.Equal(t, "greedy", p.Meta().Name)
}

// TestLoadConfigCap: LoadOptions.MaxConfigBytes replaces the Host's cap
// for one load, up or down, and a config that is not an object is named by
// its JSON type, never a Go type.
func TestLoadConfigCap(t *testing.T) {
	h := newHost(t, host.NewConfig())
	big := []byte(`{"blob":"` + strings.Repeat("x", host.DefaultMaxConfigBytes) + `"}`)
	_, err := h.Load(context.Background(), wasmFile(t, "greedy"), host.LoadOptions{Config: big})
	require.ErrorIs(t, err, host.ErrBadConfig)
	assert.Contains(t, err.Error(), fmt.Sprintf("%d bytes, cap %d", len(big), host.DefaultMaxConfigBytes))
	_, err = h.Load(context.Background(), wasmFile(t, "greedy"), host.LoadOptions{Config: big, MaxConfigBytes: 2 * len(big)})
	require.NoError(t, err)
	_, err = h.Load(context.Background(), wasmFile(t, "greedy"), host.LoadOptions{Config: []byte(`{"a":1}`), MaxConfigBytes: 4})
	require.ErrorIs(t, err, host.ErrBadConfig)

	for cfg, why := range map[string]string{`[1,2]`: "a JSON array", `"x"`: "a JSON string", `null`: "null",
		`{"a":`: "not valid JSON"} {
		_, err := h.Load(context.Background(), wasmFile(t, "greedy"), host.LoadOptions{Config: []byte(cfg)})
		require.ErrorIs(t, err, host.ErrBadConfig, cfg)
		assert.Contains(t, err.Error(), "not a JSON object: "+why, cfg)
		for _, goName := range []string{"Go ", "map[", "json.RawMessage"} {
			assert.NotContains(t, err.Error(), goName, cfg)
		}
	}
}

func TestLoadTooLarge(t *testing.T) {
	h := newHost(t, host.NewConfig().WithMaxModuleBytes(100))
	_, err := h.Load(context.Background(), wasmFile(t, "greedy"), host.LoadOptions{})
	assert.ErrorIs(t, err, host.ErrTooLarge)
	_, err = h.LoadFile(context.Background(), filepath.Join("testdata", "greedy.wasm"), host.LoadOptions{})
	assert.ErrorIs(t, err, host.ErrTooLarge)
}

func TestPluginIdentity(t *testing.T) {
	h, err := host.New(context.Background(), host.NewConfig())
	require.NoError(t, err)
	defer h.Close(context.Background())
	b := wasmFile(t, "greedy")
	p := load(t, h, "greedy", host.LoadOptions{})
	sum := sha256.Sum256(b)
	assert.Equal(t, hex.EncodeToString(sum[:]), p.SHA256())
	assert.Equal(t, abi.KindSampler, p.Kind())
	assert.Equal(t, "1.0.0", p.Meta().Version)
	assert.Contains(t, p.String(), "sampler greedy 1.0.0 (sha256 "+p.SHA256()[:12])
	assert.Equal(t, host.Limits{MemoryPages: host.DefaultMemoryPages, CallTimeout: host.DefaultCallTimeout,
		InitTimeout: host.DefaultInitTimeout}, p.Limits())
}

func TestLoadManifest(t *testing.T) {
	h := newHost(t, host.NewConfig())
	dir := t.TempDir()
	b := wasmFile(t, "greedy")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "g.wasm"), b, 0o644))
	sum := sha256.Sum256(b)
	pin := hex.EncodeToString(sum[:])
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
		return p
	}

	p, err := h.LoadManifest(context.Background(), write("ok.json",
		`{"path":"g.wasm","sha256":"`+strings.ToUpper(pin)+`","kind":"sampler","config":{"x":1},"limits":{"memory_pages":64,"call_timeout_ms":10}}`))
	require.NoError(t, err)
	assert.Equal(t, uint32(64), p.Limits().MemoryPages)
	assert.Equal(t, "10ms", p.Limits().CallTimeout.String())

	// A pin alone names the module loaded above.
	p2, err := h.LoadManifest(context.Background(), write("pin.json", `{"sha256":"`+pin+`"}`))
	require.NoError(t, err)
	assert.Equal(t, p.SHA256(), p2.SHA256())

	for name, tc := range map[string]struct {
		body string
		want error
	}{
		"wrong pin":      {`{"path":"g.wasm","sha256":"` + strings.Repeat("0", 64) + `"}`, host.ErrHashMismatch},
		"unknown pin":    {`{"sha256":"` + strings.Repeat("1", 64) + `"}`, host.ErrUnknownModule},
		"wrong kind":     {`{"path":"g.wasm","kind":"stop"}`, host.ErrKind},
		"config not obj": {`{"path":"g.wasm","config":"x"}`, host.ErrBadConfig},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := h.LoadManifest(context.Background(), write(name+".json", tc.body))
			assert.ErrorIs(t, err, tc.want)
		})
	}
}

func TestParseManifestRefuses(t *testing.T) {
	for _, tt := range []struct{ body, want string }{
		{``, "host: manifest: empty, not a JSON object"},
		{`[]`, "host: manifest: not a JSON object but an array"},
		{`"g.wasm"`, "host: manifest: not a JSON object but a string"},
		{`{}`, "host: manifest: neither path nor sha256"},
		{`{"path":"a","extra":1}`, `host: manifest: unknown key "extra" (the keys are path, sha256, kind, config, limits`},
		{`{"path":1}`, "host: manifest: path must be a string, not a number"},
		{`{"path":"a","limits":[]}`, "host: manifest: limits must be an object, not an array"},
		{`{"path":"a","limits":{"memory_pages":-1}}`, "host: manifest: limits.memory_pages must be a non-negative integer, not the number -1"},
		{`{"path":"a","limits":{"call_timeout_ms":"1s"}}`, "host: manifest: limits.call_timeout_ms must be a non-negative integer, not a string"},
		{`{"path":`, "host: manifest: "},
		{`{"path" "a"}`, "host: manifest: not JSON (byte 9): invalid character"},
		{`{"sha256":"abc"}`, `host: manifest: sha256 "abc" is not 64 hex digits`},
		{`{"path":"a","kind":"filter"}`, `host: manifest: kind "filter"`},
		{`{"path":"a"} {}`, "host: manifest: trailing data"},
	} {
		_, err := host.ParseManifest([]byte(tt.body))
		require.Error(t, err, tt.body)
		assert.Contains(t, err.Error(), tt.want, tt.body)
		assert.NotContains(t, err.Error(), "Go ", "%s: the manifest's terms, not Go's", tt.body)
		assert.NotContains(t, err.Error(), "host.Manifest", tt.body)
	}
}

// TestParseManifestLimitRange: a limit out of its range is a
// *host.LimitError naming the manifest's key, the value and the range.
func TestParseManifestLimitRange(t *testing.T) {
	for _, tt := range []struct{ body, key, value, want string }{
		{`{"path":"a","limits":{"call_timeout_ms":-1}}`, "limits.call_timeout_ms", "-1",
			"host: manifest: limits.call_timeout_ms -1 is out of range: 0 (the default) or more"},
		{`{"path":"a","limits":{"init_timeout_ms":-2000}}`, "limits.init_timeout_ms", "-2000",
			"host: manifest: limits.init_timeout_ms -2000 is out of range: 0 (the default) or more"},
		{`{"path":"a","limits":{"memory_pages":65537}}`, "limits.memory_pages", "65537",
			"host: manifest: limits.memory_pages 65537 is out of range: 0 (the default) to 65536"},
	} {
		_, err := host.ParseManifest([]byte(tt.body))
		var le *host.LimitError
		require.ErrorAs(t, err, &le, tt.body)
		assert.Equal(t, tt.key, le.Key)
		assert.Equal(t, tt.value, le.Value)
		assert.EqualError(t, err, tt.want)
	}
	_, err := host.ParseManifest([]byte(`{"path":"a","limits":{"memory_pages":65536,"call_timeout_ms":0}}`))
	assert.NoError(t, err, "the edges of the ranges")
}

// TestLimitsRange: the Go API's limits out of range (LoadOptions.Limits,
// Config.WithLimits) are a *host.LimitError naming the Go field, as a
// manifest's are named by its key; the edges of the ranges load.
func TestLimitsRange(t *testing.T) {
	h := newHost(t, host.NewConfig())
	for _, tt := range []struct {
		limits     host.Limits
		key, value string
	}{
		{host.Limits{MemoryPages: host.MaxMemoryPages + 1}, "Limits.MemoryPages", "65537"},
		{host.Limits{MemoryPages: 1 << 31}, "Limits.MemoryPages", "2147483648"},
		{host.Limits{CallTimeout: -time.Millisecond}, "Limits.CallTimeout", "-1ms"},
		{host.Limits{InitTimeout: -2 * time.Second}, "Limits.InitTimeout", "-2s"},
	} {
		t.Run(tt.key+"="+tt.value, func(t *testing.T) {
			_, err := h.Load(context.Background(), wasmFile(t, "greedy"), host.LoadOptions{Limits: tt.limits})
			var le *host.LimitError
			require.ErrorAs(t, err, &le)
			assert.Equal(t, tt.key, le.Key)
			assert.Equal(t, tt.value, le.Value)
			var lo *host.LoadError
			assert.ErrorAs(t, err, &lo, "still a load error naming the module")

			_, err = host.New(context.Background(), host.NewConfig().WithLimits(tt.limits))
			require.ErrorAs(t, err, &le)
			assert.Equal(t, tt.key, le.Key)
			assert.Equal(t, tt.value, le.Value)
		})
	}
	p := load(t, h, "greedy", host.LoadOptions{Limits: host.Limits{MemoryPages: host.MaxMemoryPages}})
	assert.Equal(t, "greedy", p.Meta().Name)
}

// FuzzParseManifest: ParseManifest never panics, and what it accepts has a
// path or a 64-digit lower-case pin.
func FuzzParseManifest(f *testing.F) {
	f.Add([]byte(`{"path":"g.wasm","sha256":"` + strings.Repeat("a", 64) + `","config":{"k":[1]},"limits":{"memory_pages":3}}`))
	f.Add([]byte(`{"sha256":"` + strings.Repeat("F", 64) + `"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := host.ParseManifest(b)
		if err != nil {
			return
		}
		require.True(t, m.Path != "" || len(m.SHA256) == 64)
		require.Equal(t, strings.ToLower(m.SHA256), m.SHA256)
	})
}

// With a cache folder, a second Host reuses the compiled code.
func TestCompilationCacheDir(t *testing.T) {
	dir := t.TempDir()
	for i := 0; i < 2; i++ {
		h := newHost(t, host.NewConfig().WithCompilationCacheDir(dir))
		s, err := host.NewSampler(enginetest.NewTokenVocab(10, nil), load(t, h, "greedy", host.LoadOptions{}))
		require.NoError(t, err)
		works(t, s, 10)
		require.NoError(t, s.Close())
		require.NoError(t, h.Close(context.Background()))
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.NotEmpty(t, entries)
}
