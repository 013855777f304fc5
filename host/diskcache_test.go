package host_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/host"
)

// dirUsage is the number of compiled files under dir (wazero's finished
// files, not its temporary ones) and their bytes, read from the disk.
func dirUsage(t testing.TB, dir string) (files int, bytes int64) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(path, ".tmp") {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		files++
		bytes += info.Size()
		return nil
	}))
	return files, bytes
}

// TestNamespacesCompileApart: the same bytes loaded in two namespaces are
// two compilations, down to wazero (each leaves its own file in the
// compilation cache dir: wazero compiled it again rather than finding the
// first), so one tenant's upload time cannot tell whether another uploaded
// the module. Within a namespace the module is compiled once; evicting it
// in one namespace leaves the other's.
func TestNamespacesCompileApart(t *testing.T) {
	dir := t.TempDir()
	h := newHost(t, host.NewConfig().WithCompilationCacheDir(dir))
	ctx := context.Background()
	wasm := wasmFile(t, "greedy")
	files0, _ := dirUsage(t, dir) // the probe's
	c0 := h.Compilations()

	p, err := h.Load(ctx, wasm, host.LoadOptions{Namespace: "a"})
	require.NoError(t, err)
	_, err = h.Load(ctx, wasm, host.LoadOptions{Namespace: "a"})
	require.NoError(t, err)
	assert.Equal(t, c0+1, h.Compilations(), "compiled once in a")
	files, _ := dirUsage(t, dir)
	assert.Equal(t, files0+1, files)

	_, err = h.Load(ctx, wasm, host.LoadOptions{Namespace: "b"})
	require.NoError(t, err)
	assert.Equal(t, c0+2, h.Compilations(), "b compiles a's module again")
	files, _ = dirUsage(t, dir)
	assert.Equal(t, files0+2, files, "wazero compiled it again: a file of its own")
	_, err = h.Load(ctx, wasm, host.LoadOptions{})
	require.NoError(t, err)
	assert.Equal(t, c0+3, h.Compilations(), "and so does the shared namespace")

	assert.True(t, h.Evict("a", p.SHA256()))
	assert.False(t, h.Evict("a", p.SHA256()))
	files, _ = dirUsage(t, dir)
	assert.Equal(t, files0+2, files, "a's file is deleted")
	_, err = h.Load(ctx, wasm, host.LoadOptions{Namespace: "b"})
	require.NoError(t, err)
	assert.Equal(t, c0+3, h.Compilations(), "b's is still cached")
}

// TestCompiledDirBounded: upload-delete-refuse cycles of distinct modules
// (each loaded, then evicted as its plugin's delete does, and a module
// refused after its compilation) keep the compilation cache dir within its
// budget at every step, leave nothing of them on disk or in the cache, and
// bring the heap back within 10% of where it started. Each compilation
// writes (and syncs) a file, ~5 ms here: CI runs cycles of 30 modules,
// REALIZAR_CACHE_CYCLE=200 the 200 (4 s).
func TestCompiledDirBounded(t *testing.T) {
	n := 30
	if v := os.Getenv("REALIZAR_CACHE_CYCLE"); v != "" {
		var err error
		n, err = strconv.Atoi(v)
		require.NoError(t, err)
	}
	dir := t.TempDir()
	greedy, bad := wasmFile(t, "greedy"), wasmFile(t, "badtype")
	probe := newHost(t, host.NewConfig().WithCompilationCacheDir(t.TempDir()))
	_, probeBytes := probe.CompiledOnDisk()
	_, err := probe.Load(context.Background(), variant(t, greedy, 0), host.LoadOptions{})
	require.NoError(t, err)
	_, fileBytes := probe.CompiledOnDisk()
	fileBytes -= probeBytes // one greedy's compiled file
	budget := 8 * fileBytes
	h := newHost(t, host.NewConfig().WithCompilationCacheDir(dir).WithCompilationCacheDirBytes(budget))
	ctx := context.Background()
	cycle := func(from int) {
		var sums []string
		for i := from; i < from+n; i++ {
			p, err := h.Load(ctx, variant(t, greedy, i), host.LoadOptions{Namespace: "t"})
			require.NoError(t, err)
			sums = append(sums, p.SHA256())
			_, err = h.Load(ctx, variant(t, bad, i), host.LoadOptions{Namespace: "t"})
			require.ErrorIs(t, err, host.ErrMissingExport)
			_, b := dirUsage(t, dir)
			require.LessOrEqual(t, b, budget, "after %d uploads", i+1)
			_, charged := h.CompiledOnDisk()
			require.Equal(t, b, charged)
		}
		for _, s := range sums {
			h.Evict("t", s)
		}
		files, _ := dirUsage(t, dir)
		assert.LessOrEqual(t, files, 1, "the probe's file at most is left")
		mods, _ := h.CachedModules()
		assert.Zero(t, mods)
	}
	cycle(0)
	before := heapInuse()
	cycle(n)
	var after uint64
	for range 20 { // cleanups run on their own goroutine
		if after = heapInuse(); float64(after) <= 1.1*float64(before) {
			break
		}
	}
	t.Logf("compiled file %d bytes; heap in use: %d KiB before, %d KiB after %d modules uploaded, deleted and refused",
		fileBytes, before>>10, after>>10, n)
	assert.LessOrEqual(t, float64(after), 1.1*float64(before))
}

// TestCompiledDirAcrossRestarts: a Host finds the files an earlier one
// left (charged, oldest first, and trimmed to its budget), and
// EvictModule deletes the file of a module an earlier process compiled.
func TestCompiledDirAcrossRestarts(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	greedy := wasmFile(t, "greedy")
	first := newHost(t, host.NewConfig().WithCompilationCacheDir(dir))
	for i := range 3 {
		_, err := first.Load(ctx, variant(t, greedy, i), host.LoadOptions{Namespace: "t"})
		require.NoError(t, err)
	}
	files, bytes := first.CompiledOnDisk()
	require.Equal(t, 4, files) // and the probe's
	require.NoError(t, first.Close(ctx))

	second := newHost(t, host.NewConfig().WithCompilationCacheDir(dir))
	gotFiles, gotBytes := second.CompiledOnDisk()
	assert.Equal(t, files, gotFiles)
	assert.Equal(t, bytes, gotBytes)
	assert.True(t, second.EvictModule("t", variant(t, greedy, 1)), "an earlier process's file")
	onDisk, _ := dirUsage(t, dir)
	assert.Equal(t, 3, onDisk)
	assert.False(t, second.EvictModule("u", variant(t, greedy, 0)), "another namespace's file stays")
	require.NoError(t, second.Close(ctx))

	// A smaller budget drops the oldest at start.
	third := newHost(t, host.NewConfig().WithCompilationCacheDir(dir).WithCompilationCacheDirBytes(bytes/2))
	_, b := third.CompiledOnDisk()
	_, du := dirUsage(t, dir)
	assert.LessOrEqual(t, b, bytes/2)
	assert.Equal(t, b, du)

	_, err := host.New(ctx, host.NewConfig().WithCompilationCacheDirBytes(-1))
	assert.Error(t, err)
}

// TestRefusedModuleNotKept: a module refused after its compilation for
// its initial memory (testdata/bad.wasm declares 2 pages) leaves nothing
// compiled, in the cache or on disk; one refused for its config, the
// caller's fault, stays compiled for the next Load.
func TestRefusedModuleNotKept(t *testing.T) {
	dir := t.TempDir()
	h := newHost(t, host.NewConfig().WithCompilationCacheDir(dir))
	ctx := context.Background()
	files0, _ := dirUsage(t, dir)
	bad := wasmFile(t, "bad")
	_, err := h.Load(ctx, bad, host.LoadOptions{Namespace: "t", Limits: host.Limits{MemoryPages: 1}})
	require.ErrorIs(t, err, host.ErrPluginMemory)
	mods, _ := h.CachedModules()
	assert.Zero(t, mods)
	files, _ := dirUsage(t, dir)
	assert.Equal(t, files0, files)

	_, err = h.Load(ctx, bad, host.LoadOptions{Namespace: "t", Config: []byte("[1]")})
	require.ErrorIs(t, err, host.ErrBadConfig)
	mods, _ = h.CachedModules()
	assert.Equal(t, 1, mods)
}
