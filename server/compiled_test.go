package server

import (
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/host"
)

// TestUploadCompilesPerTenant: tenant b's upload of the bytes tenant a
// uploaded is compiled again (so its time tells b nothing of a's uploads),
// a's second upload of them is not, and b's request with its plugin uses
// b's compilation.
func TestUploadCompilesPerTenant(t *testing.T) {
	s := startServer(t, testTenantsFile(), 8)
	wasm := withVersion(t, testdataWasm(t, "greedy.wasm"), "per-tenant")
	c0 := s.host.Compilations()
	sum := s.upload(t, keyA, wasm)
	assert.Equal(t, c0+1, s.host.Compilations())
	s.upload(t, keyA, wasm)
	assert.Equal(t, c0+1, s.host.Compilations(), "a's own module is cached for a")
	s.upload(t, keyB, wasm)
	assert.Equal(t, c0+2, s.host.Compilations(), "b compiles it again")

	body := fmt.Sprintf(`{"prompt": "Once", "max_tokens": 2, "realizar": {"sampler": {"plugin": %q}}}`, sum)
	code, out := s.do(t, "POST", "/v1/completions", keyB, []byte(body))
	require.Equal(t, http.StatusOK, code, string(out))
	assert.Equal(t, c0+2, s.host.Compilations(), "b's request runs b's compilation")
}

// compiledUsage is the number of finished files under dir and their bytes.
func compiledUsage(t testing.TB, dir string) (files int, bytes int64) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(path, ".tmp") {
			return err
		}
		info, err := d.Info()
		if err == nil {
			files, bytes = files+1, bytes+info.Size()
		}
		return err
	}))
	return files, bytes
}

// heapInuse is the heap in use after two collections (and a moment for
// the cleanups they queue) with memory returned to the OS.
func heapInuse() uint64 {
	runtime.GC()
	time.Sleep(10 * time.Millisecond)
	runtime.GC()
	debug.FreeOSMemory()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// TestCompiledCodeReleased: cycles of uploads through the API — a plugin
// stored then deleted, one the host refuses after compiling it (its
// exports' types), one over a tenant's quota — keep the compilation cache
// dir within its budget at every step and leave nothing of them compiled,
// on disk or in memory; the heap comes back within 10%. CI runs cycles of
// 20 modules; REALIZAR_CACHE_CYCLE=200 the 200 (8 s).
func TestCompiledCodeReleased(t *testing.T) {
	n := 20
	if v := os.Getenv("REALIZAR_CACHE_CYCLE"); v != "" {
		var err error
		n, err = strconv.Atoi(v)
		require.NoError(t, err)
	}
	greedy, bad := testdataWasm(t, "greedy.wasm"), testdataWasm(t, "badtype.wasm")
	tenants := fmt.Appendf(nil, `{"defaults": {"step_deadline": "2s", "requests_per_minute": 100000},
  "tenants": [{"name": "a", "key_sha256": [%q]}, {"name": "q", "key_sha256": [%q], "limits": {"max_plugins": 1}}]}`,
		HashKey(keyA), HashKey(keyB))
	dir := t.TempDir()
	// The budget: eight greedy files, measured on a Host of its own.
	probe, err := host.New(t.Context(), host.NewConfig().WithCompilationCacheDir(t.TempDir()))
	require.NoError(t, err)
	_, b0 := probe.CompiledOnDisk()
	_, err = probe.Load(t.Context(), withVersion(t, greedy, "budget"), host.LoadOptions{})
	require.NoError(t, err)
	_, b1 := probe.CompiledOnDisk()
	require.NoError(t, probe.Close(t.Context()))
	budget := 8 * (b1 - b0)

	s := startServerHost(t, tenants, Config{Queue: 8},
		host.NewConfig().WithCompilationCacheDir(dir).WithCompilationCacheDirBytes(budget), nil)
	s.upload(t, keyB, withVersion(t, greedy, "held")) // q's one plugin
	within := func(step string) {
		t.Helper()
		_, du := compiledUsage(t, dir)
		require.LessOrEqual(t, du, budget, step)
		_, charged := s.host.CompiledOnDisk()
		require.Equal(t, du, charged, step)
	}
	cycle := func(from int) {
		for i := from; i < from+n; i++ {
			v := "v" + strconv.Itoa(i)
			sum := s.upload(t, keyA, withVersion(t, greedy, v))
			within("upload " + v)
			code, body := s.do(t, "POST", "/v1/plugins", keyA, withVersion(t, bad, v))
			require.Equal(t, http.StatusBadRequest, code, string(body))
			within("refused " + v)
			code, body = s.do(t, "POST", "/v1/plugins", keyB, withVersion(t, greedy, v))
			require.Equal(t, http.StatusTooManyRequests, code, string(body))
			within("over quota " + v)
			code, body = s.do(t, "DELETE", "/v1/plugins/"+sum, keyA, nil)
			require.Equal(t, http.StatusOK, code, string(body))
			within("deleted " + v)
		}
		files, _ := compiledUsage(t, dir)
		assert.LessOrEqual(t, files, 2, "q's plugin's file (and the probe's) at most")
		mods, _ := s.host.CachedModules()
		assert.Equal(t, 1, mods, "q's plugin alone")
	}
	cycle(0)
	before := heapInuse()
	cycle(n)
	var after uint64
	for range 20 {
		if after = heapInuse(); float64(after) <= 1.1*float64(before) {
			break
		}
	}
	t.Logf("heap in use: %d KiB before, %d KiB after %d uploads, deletes and refusals of each kind", before>>10, after>>10, n)
	assert.LessOrEqual(t, float64(after), 1.1*float64(before))
}
