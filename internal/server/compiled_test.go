package server

import (
	"bytes"
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

	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/abi/wasmfile"
	"github.com/realizar-host/realizar-host/host"
	"github.com/realizar-host/realizar-host/internal/tenancy"
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
		tenancy.HashKey(keyA), tenancy.HashKey(keyB))
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

// TestCompiledModulesClosed: the compiled code of a module goes when its
// plugin is deleted, when its upload is refused (after compiling: its
// exports' types; or over the tenant's quota) and after a request that ran
// it, at once, without waiting for the collector: the Host's count of
// compiled modules comes back to where it was.
func TestCompiledModulesClosed(t *testing.T) {
	greedy, bad := testdataWasm(t, "greedy.wasm"), testdataWasm(t, "badtype.wasm")
	tenants := fmt.Appendf(nil, `{"defaults": {"step_deadline": "2s", "requests_per_minute": 100000},
  "tenants": [{"name": "a", "key_sha256": [%q]}, {"name": "q", "key_sha256": [%q], "limits": {"max_plugins": 1}}]}`,
		tenancy.HashKey(keyA), tenancy.HashKey(keyB))
	s := startServerHost(t, tenants, Config{Queue: 8}, host.NewConfig(), nil)
	s.upload(t, keyB, withVersion(t, greedy, "held")) // q's one plugin
	// A request with a built-in compiles the built-ins it runs; they stay.
	code, out := s.do(t, "POST", "/v1/completions", keyA, []byte(`{"prompt": "Once", "max_tokens": 2}`))
	require.Equal(t, http.StatusOK, code, string(out))
	base := s.host.CompiledModules()
	for i := range 3 {
		v := "v" + strconv.Itoa(i)
		sum := s.upload(t, keyA, withVersion(t, greedy, v))
		assert.Equal(t, base+1, s.host.CompiledModules(), "uploaded %s: compiled and cached", v)
		body := fmt.Sprintf(`{"prompt": "Once", "max_tokens": 2, "realizar": {"sampler": {"plugin": %q}}}`, sum)
		code, out := s.do(t, "POST", "/v1/completions", keyA, []byte(body))
		require.Equal(t, http.StatusOK, code, string(out))
		assert.Equal(t, base+1, s.host.CompiledModules(), "%s ran: still the one compilation", v)
		code, out = s.do(t, "DELETE", "/v1/plugins/"+sum, keyA, nil)
		require.Equal(t, http.StatusOK, code, string(out))
		assert.Equal(t, base, s.host.CompiledModules(), "deleted %s", v)

		code, out = s.do(t, "POST", "/v1/plugins", keyA, withVersion(t, bad, v))
		require.Equal(t, http.StatusBadRequest, code, string(out))
		assert.Equal(t, base, s.host.CompiledModules(), "refused %s after compiling it", v)
		code, out = s.do(t, "POST", "/v1/plugins", keyB, withVersion(t, greedy, v))
		require.Equal(t, http.StatusTooManyRequests, code, string(out))
		assert.Equal(t, base, s.host.CompiledModules(), "%s over q's quota", v)
	}
}

// codeModule is a sampler plugin of about 140 KB that is nearly all code:
// 200 functions of 65 memory loads each (about 1 MiB of machine code on
// amd64), its metadata version v making it distinct. It passes an
// upload's checks; it is not meant to run.
func codeModule(v string) ([]byte, error) {
	const funcs, loads = 200, 65
	section := func(m []byte, id byte, body []byte) []byte {
		return append(wasmfile.AppendU32(append(m, id), uint32(len(body))), body...)
	}
	const i32, i64 = 0x7f, 0x7e
	m := append([]byte(nil), wasmfile.Magic...)
	m = section(m, wasmfile.SectionType, []byte{5,
		0x60, 0, 0, // 0: the marker
		0x60, 4, i32, i32, i32, i32, 1, i64, // 1: realizar_init
		0x60, 2, i64, i32, 1, i32, // 2: realizar_reset
		0x60, 2, i32, i32, 1, i32, // 3: realizar_sample
		0x60, 1, i32, 1, i32, // 4: the filler
	})
	fns := wasmfile.AppendU32(nil, 4+funcs)
	fns = append(fns, 0, 1, 2, 3)
	fns = append(fns, bytes.Repeat([]byte{4}, funcs)...)
	m = section(m, 3, fns) // the function section
	m = section(m, wasmfile.SectionMemory, []byte{1, 0, 1})
	exports := []byte{5}
	for i, name := range []string{abi.ExportMemory, abi.KindSampler.MarkerV(abi.Version), abi.ExportInit, abi.ExportReset, abi.ExportSample} {
		exports = append(wasmfile.AppendU32(exports, uint32(len(name))), name...)
		if i == 0 {
			exports = append(exports, wasmfile.ExternMemory, 0)
		} else {
			exports = append(exports, wasmfile.ExternFunc, byte(i-1))
		}
	}
	m = section(m, wasmfile.SectionExport, exports)
	code := wasmfile.AppendU32(nil, 4+funcs)
	for _, body := range [][]byte{
		{0, 0x0B},                   // the marker: nothing
		{0, 0x42, 0x80, 0x08, 0x0B}, // init: i64.const 1024
		{0, 0x41, 0, 0x0B},          // reset: i32.const 0
		{0, 0x41, 0, 0x0B},          // sample: i32.const 0
	} {
		code = append(wasmfile.AppendU32(code, uint32(len(body))), body...)
	}
	for range funcs {
		body := []byte{1, 1, i32} // one local: the sum
		for k := range loads {
			// sum += load(arg + 4k)
			body = wasmfile.AppendU32(append(body, 0x20, 0, 0x28, 2), uint32(4*k))
			body = append(body, 0x20, 1, 0x6A, 0x21, 1)
		}
		body = append(body, 0x20, 1, 0x0B)
		code = append(wasmfile.AppendU32(code, uint32(len(body))), body...)
	}
	m = section(m, wasmfile.SectionCode, code)
	meta, err := wasmfile.MarshalMeta(wasmfile.Meta{ABI: abi.Version, Kind: abi.KindSampler.String(), Name: "code", Version: v})
	if err != nil {
		return nil, err
	}
	return wasmfile.SetCustomSection(m, abi.MetaSection, meta)
}
