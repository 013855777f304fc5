package server

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/abi/wasmfile"
	"github.com/realizar-host/realizar-host/internal/tenancy"
)

// withVersion is wasm with its metadata's version replaced: a distinct
// module (another sha256) of the same plugin.
func withVersion(t testing.TB, wasm []byte, version string) []byte {
	m, err := tenancy.ModuleMeta(wasm)
	require.NoError(t, err)
	m.Version = version
	payload, err := wasmfile.MarshalMeta(m)
	require.NoError(t, err)
	out, err := wasmfile.SetCustomSection(wasm, abi.MetaSection, payload)
	require.NoError(t, err)
	return out
}

// TestPluginQuota: the tenant's plugin count and total bytes are a 429
// quota_exceeded; one module over max_plugin_bytes stays a 413; a module
// held already, and one uploaded after a delete, are fine; the listing
// reads each plugin's metadata.
func TestPluginQuota(t *testing.T) {
	greedy := testdataWasm(t, "greedy.wasm")
	n := len(withVersion(t, greedy, "v0"))
	tenants := fmt.Appendf(nil, `{"defaults": {"max_plugins": 2, "max_plugin_total_bytes": %d, "max_plugin_bytes": %d},
  "tenants": [{"name": "a", "key_sha256": [%q]}, {"name": "b", "key_sha256": [%q], "limits": {"max_plugins": 1}}]}`,
		3*n, 4*n, tenancy.HashKey(keyA), tenancy.HashKey(keyB))
	s := startServer(t, tenants, 8)

	first := s.upload(t, keyA, withVersion(t, greedy, "v1"))
	s.upload(t, keyA, withVersion(t, greedy, "v1")) // held already
	s.upload(t, keyA, withVersion(t, greedy, "v2"))
	code, body := s.do(t, "POST", "/v1/plugins", keyA, withVersion(t, greedy, "v3"))
	require.Equal(t, http.StatusTooManyRequests, code, string(body))
	assert.Equal(t, "quota_exceeded", errorOf(t, body).Code)

	big := make([]byte, 4*n+1)
	code, body = s.do(t, "POST", "/v1/plugins", keyA, big)
	require.Equal(t, http.StatusRequestEntityTooLarge, code, string(body))
	assert.Equal(t, "plugin_too_large", errorOf(t, body).Code)

	cached, _ := s.host.CachedModules()
	code, body = s.do(t, "DELETE", "/v1/plugins/"+first, keyA, nil)
	require.Equal(t, http.StatusOK, code, string(body))
	after, _ := s.host.CachedModules()
	assert.Equal(t, cached-1, after, "a deleted plugin's compiled code leaves the cache")
	s.upload(t, keyA, withVersion(t, greedy, "v3"))

	// b holds one; its second is over its count.
	s.upload(t, keyB, withVersion(t, greedy, "v1"))
	code, body = s.do(t, "POST", "/v1/plugins", keyB, withVersion(t, greedy, "v2"))
	require.Equal(t, http.StatusTooManyRequests, code, string(body))

	code, body = s.do(t, "GET", "/v1/plugins", keyA, nil)
	require.Equal(t, http.StatusOK, code, string(body))
	var list struct {
		Data []pluginObject `json:"data"`
	}
	require.NoError(t, jsonUnmarshal(body, &list))
	require.Len(t, list.Data, 2)
	for _, p := range list.Data {
		assert.Equal(t, "sampler", p.Kind)
		assert.Equal(t, "greedy", p.Name)
		assert.Contains(t, []string{"v2", "v3"}, p.Version)
		assert.Equal(t, n, p.Bytes)
	}
}
