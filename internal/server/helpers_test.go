package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tetratelabs/wazero"

	"github.com/realizar-host/realizar-host/host"
	"github.com/realizar-host/realizar-host/internal/chatsandbox"
	"github.com/realizar-host/realizar-host/internal/fixture"
	"github.com/realizar-host/realizar-host/internal/fixturemodel"
	"github.com/realizar-host/realizar-host/internal/plugins"
	"github.com/realizar-host/realizar-host/internal/tenancy"
	"github.com/realizar-host/realizar-host/internal/testenv"
	"github.com/realizar-host/realizar-host/model"
	"github.com/realizar-host/realizar-host/tokenizer"
)

// fixtureConfig is the serving tests' model (fixturemodel).
func fixtureConfig() fixture.Config { return fixturemodel.Config("serve-fixture") }

// fixturePath is the generated model, shared by the package's tests.
var fixturePath string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "serve-fixture-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fixturePath = filepath.Join(dir, "serve-fixture.gguf")
	if err := fixturemodel.Generate(fixturePath, "serve-fixture"); err != nil {
		fmt.Fprintln(os.Stderr, "generate fixture:", err)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// Test tenants: their API keys and the tenants file the server reads.
const (
	keyA = "sk-tenant-a-0123456789"
	keyB = "sk-tenant-b-0123456789"
	keyC = "sk-tenant-c-0123456789"
)

func testTenantsFile() []byte {
	return fmt.Appendf(nil, `{
  "defaults": {"step_deadline": "2s", "max_concurrent": 32, "requests_per_minute": 100000, "memory_pages": 64},
  "tenants": [
    {"name": "a", "key_sha256": [%q], "limits": {"max_plugin_bytes": 65536}},
    {"name": "b", "key_sha256": [%q]},
    {"name": "c", "key_sha256": [%q]}
  ]
}`, tenancy.HashKey(keyA), tenancy.HashKey(keyB), tenancy.HashKey(keyC))
}

// testServer is a running server on loopback.
type testServer struct {
	URL   string
	srv   *Server
	host  *host.Host
	model *Model
	http  *httptest.Server
}

// loadModel opens the fixture as the server's Model.
func loadModel(t testing.TB) *Model {
	m, _ := loadModelWeights(t)
	return m
}

// loadModelWeights is loadModel with the model.Model under it.
func loadModelWeights(t testing.TB) (*Model, *model.Model) {
	l := fixturemodel.Open(t, fixturePath)
	fwd, err := l.NewForward()
	require.NoError(t, err)
	return &Model{ID: "serve-fixture", Forward: fwd, NewForward: l.NewForward, Tokenizer: l.Tokenizer,
		KVBytesPerPosition: l.Model.KVBytesPerPosition()}, l.Model
}

// startServer starts a server with the test tenants (or anonymous when
// tenants is nil) and the fixture loaded.
func startServer(t testing.TB, tenants []byte, queue int) *testServer {
	return startServerSlots(t, tenants, queue, 0)
}

// startServerSlots is startServer with Config.Slots = slots.
func startServerSlots(t testing.TB, tenants []byte, queue, slots int) *testServer {
	return startServerConfig(t, tenants, Config{Queue: queue, Slots: slots})
}

// startServerConfig is startServer with cfg's Queue, Parallel,
// BatchTokens, Slots and KVMemory.
func startServerConfig(t testing.TB, tenants []byte, cfg Config) *testServer {
	return startServerWith(t, tenants, cfg, nil)
}

// testHostConfig is host.NewConfig with the compilation cache the test
// binaries of one `make test` share (testenv.CompileCacheDir), when set.
func testHostConfig(t testing.TB) host.Config {
	cfg := host.NewConfig()
	if dir := testenv.CompileCacheDir(t); dir != "" {
		cfg = cfg.WithCompilationCacheDir(dir)
	}
	return cfg
}

// testSandbox is a chat-template sandbox compiled through the same shared
// cache (in memory when it is unset), closed when t ends.
func testSandbox(t testing.TB) *chatsandbox.Renderer {
	cache := wazero.NewCompilationCache()
	if dir := testenv.CompileCacheDir(t); dir != "" {
		var err error
		cache, err = wazero.NewCompilationCacheWithDir(dir)
		require.NoError(t, err)
	}
	r, err := chatsandbox.New(context.Background(), chatsandbox.Config{Cache: cache})
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.Close(context.Background()); _ = cache.Close(context.Background()) })
	return r
}

// startServerWith is startServerConfig with the model passed through wrap
// (when not nil) before the server takes it. cfg.Host, when set, is the
// plugin host (the caller closes it); else the server gets one of its own.
func startServerWith(t testing.TB, tenants []byte, cfg Config, wrap func(*Model, *model.Model)) *testServer {
	return startServerHost(t, tenants, cfg, testHostConfig(t), wrap)
}

// startServerHost is startServerWith with its Host configured by hostCfg.
func startServerHost(t testing.TB, tenants []byte, cfg Config, hostCfg host.Config, wrap func(*Model, *model.Model)) *testServer {
	return startServerHTTP(t, tenants, cfg, hostCfg, wrap, nil)
}

// startServerHTTP is startServerHost with tune (when not nil) applied to
// the http.Server before it starts serving: its ConnState hook, say.
func startServerHTTP(t testing.TB, tenants []byte, cfg Config, hostCfg host.Config, wrap func(*Model, *model.Model),
	tune func(*http.Server)) *testServer {
	ctx := context.Background()
	h, own := cfg.Host, cfg.Host == nil
	var err error
	if own {
		h, err = host.New(ctx, hostCfg)
		require.NoError(t, err)
	}
	ts := tenancy.Anonymous(tenancy.Limits{})
	if tenants != nil {
		ts, err = tenancy.ParseTenants(tenants)
		require.NoError(t, err)
	}
	store, err := tenancy.NewDirStore(t.TempDir())
	require.NoError(t, err)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	cfg.Tenants, cfg.Store, cfg.Host, cfg.Builtins, cfg.Logger = ts, store, h, plugins.Builtin, log
	srv, err := New(cfg)
	require.NoError(t, err)
	m, mdl := loadModelWeights(t)
	if wrap != nil {
		wrap(m, mdl)
	}
	require.NoError(t, srv.SetModel(m))
	hs := httptest.NewUnstartedServer(srv)
	if tune != nil {
		tune(hs.Config)
	}
	hs.Listener = GuardListener(hs.Config, hs.Listener)
	hs.Start()
	t.Cleanup(func() {
		hs.Close()
		srv.Wait()
		if own {
			_ = h.Close(ctx)
		}
	})
	return &testServer{URL: hs.URL, srv: srv, host: h, model: m, http: hs}
}

// do sends a request with key (none when empty) and returns the status and body.
func (s *testServer) do(t testing.TB, method, path, key string, body []byte) (int, []byte) {
	req, err := http.NewRequest(method, s.URL+path, bytes.NewReader(body))
	require.NoError(t, err)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, b
}

// upload stores wasm for key and returns its sha256.
func (s *testServer) upload(t testing.TB, key string, wasm []byte) string {
	code, body := s.do(t, "POST", "/v1/plugins", key, wasm)
	require.Equal(t, http.StatusOK, code, string(body))
	var o pluginObject
	require.NoError(t, json.Unmarshal(body, &o))
	return o.ID
}

// testdataWasm reads a test guest of package host.
func testdataWasm(t testing.TB, name string) []byte {
	b, err := os.ReadFile(filepath.Join("..", "..", "host", "testdata", name))
	require.NoError(t, err)
	return b
}

// errorOf decodes an OpenAI-style error body.
func errorOf(t testing.TB, body []byte) *APIError {
	var e errorBody
	require.NoError(t, json.Unmarshal(body, &e), string(body))
	require.NotNil(t, e.Error, string(body))
	return e.Error
}

// badRequestOf checks that code and body are a 400 whose error names
// param, has the error code errCode (when not ""), and whose message
// contains says; it returns the error.
func badRequestOf(t testing.TB, code int, body []byte, param, errCode, says string) *APIError {
	t.Helper()
	require.Equal(t, http.StatusBadRequest, code, string(body))
	e := errorOf(t, body)
	assert.Equal(t, param, e.Param)
	if errCode != "" {
		assert.Equal(t, errCode, e.Code)
	}
	assert.Contains(t, e.Message, says)
	return e
}

func tokenizerOpts(addSpecial bool) tokenizer.EncodeOptions {
	return tokenizer.EncodeOptions{AddSpecial: addSpecial, ParseSpecial: true}
}

func jsonOf(t testing.TB, v any) string {
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
