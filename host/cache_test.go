package host_test

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/abi/wasmfile"
	"github.com/realizar-host/realizar-host/engine/enginetest"
	"github.com/realizar-host/realizar-host/host"
)

// variant is wasm with its metadata version set to v: another module
// (another sha256) of the same plugin.
func variant(t testing.TB, wasm []byte, v int) []byte {
	t.Helper()
	mod, err := wasmfile.Parse(wasm)
	require.NoError(t, err)
	payload, _ := mod.CustomSection(abi.MetaSection)
	meta, err := wasmfile.UnmarshalMeta(payload)
	require.NoError(t, err)
	meta.Version = fmt.Sprint("v", v)
	payload, err = wasmfile.MarshalMeta(meta)
	require.NoError(t, err)
	out, err := wasmfile.SetCustomSection(wasm, abi.MetaSection, payload)
	require.NoError(t, err)
	return out
}

// heapInuse is the heap in use after collecting twice and returning
// memory to the OS; cleanups queued by the collections get a moment to run.
func heapInuse() uint64 {
	runtime.GC()
	time.Sleep(10 * time.Millisecond)
	runtime.GC()
	debug.FreeOSMemory()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// TestModuleCacheBounded: loading 200 distinct modules keeps the
// compiled-module cache within its budget, and evicting them all (as
// deleting their plugins does) brings the heap back within 10% of where it
// started. An unbounded cache keeps ~6 KiB of heap per module here: +100%.
func TestModuleCacheBounded(t *testing.T) {
	greedy := wasmFile(t, "greedy")
	size := int64(len(variant(t, greedy, 1000)))
	budget := 8 * size
	h := newHost(t, host.NewConfig().WithModuleCacheBytes(budget))
	ctx := context.Background()
	cycle := func(from int) {
		var sums []string
		for i := from; i < from+200; i++ {
			p, err := h.Load(ctx, variant(t, greedy, i), host.LoadOptions{})
			require.NoError(t, err)
			sums = append(sums, p.SHA256())
			n, b := h.CachedModules()
			require.LessOrEqual(t, b, budget, "after %d loads", i+1)
			require.LessOrEqual(t, n, 8)
		}
		for _, s := range sums {
			h.Evict("", s)
		}
		n, b := h.CachedModules()
		assert.Zero(t, n)
		assert.Zero(t, b)
	}
	// A first cycle grows the runtime's own structures to their size.
	cycle(0)
	before := heapInuse()
	cycle(200)
	var after uint64
	for range 20 { // cleanups run on their own goroutine
		if after = heapInuse(); float64(after) <= 1.1*float64(before) {
			break
		}
	}
	t.Logf("heap in use: %d KiB before, %d KiB after 200 modules loaded and evicted", before>>10, after>>10)
	assert.LessOrEqual(t, float64(after), 1.1*float64(before))
}

// TestEvictedPluginStillRuns: a Plugin loaded before its module left the
// cache still instantiates (its code is released only once no Plugin of it
// is left), and a sha256-only manifest no longer finds it.
func TestEvictedPluginStillRuns(t *testing.T) {
	h := newHost(t, host.NewConfig().WithModuleCacheBytes(1)) // every module is dropped at once
	p := load(t, h, "greedy", host.LoadOptions{})
	assert.False(t, h.Evict("", p.SHA256()), "over the budget: not kept")
	runtime.GC()
	runtime.GC()
	s, err := host.NewSampler(enginetest.NewTokenVocab(8, nil), p)
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.Reset(1, []int32{0}))
	tok, err := s.Sample([]float32{0, 1, 5, 2, 0, 0, 0, 0})
	require.NoError(t, err)
	assert.Equal(t, int32(2), tok)

	_, err = host.New(context.Background(), host.NewConfig().WithModuleCacheBytes(-1))
	assert.Error(t, err)
}

// TestCompiledCodeClosed: a module's compiled code is closed as soon as
// nothing holds it — not the cache (Evict, the cache's budget, a module
// refused after compiling), no open Plugin, no open adapter — without
// waiting for the collector; and not before: an adapter made before its
// module was evicted and its Plugin closed still runs.
func TestCompiledCodeClosed(t *testing.T) {
	ctx := context.Background()
	h := newHost(t, host.NewConfig())
	greedy := wasmFile(t, "greedy")
	logits := []float32{0, 1, 5, 2, 0, 0, 0, 0}

	// Deleted: closed once evicted with its Plugin closed, in either order.
	p, err := h.Load(ctx, variant(t, greedy, 1), host.LoadOptions{Namespace: "a"})
	require.NoError(t, err)
	assert.Equal(t, 1, h.CompiledModules())
	require.NoError(t, p.Close())
	assert.Equal(t, 1, h.CompiledModules(), "cached")
	assert.True(t, h.Evict("a", p.SHA256()))
	assert.Equal(t, 0, h.CompiledModules(), "evicted, no Plugin open")

	// In use: an adapter keeps the code of an evicted module, whose
	// Plugin is closed, until the adapter is closed.
	p, err = h.Load(ctx, variant(t, greedy, 2), host.LoadOptions{Namespace: "a"})
	require.NoError(t, err)
	s, err := host.NewSampler(enginetest.NewTokenVocab(8, nil), p)
	require.NoError(t, err)
	assert.True(t, h.Evict("a", p.SHA256()))
	require.NoError(t, p.Close())
	_, err = host.NewSampler(enginetest.NewTokenVocab(8, nil), p)
	require.ErrorIs(t, err, host.ErrClosed, "a closed Plugin makes no adapter")
	assert.Equal(t, 1, h.CompiledModules(), "held by the Sampler")
	for range 2 { // two turns
		require.NoError(t, s.Reset(1, []int32{0}))
		tok, err := s.Sample(logits)
		require.NoError(t, err)
		assert.Equal(t, int32(2), tok)
	}
	require.NoError(t, s.Close())
	assert.Equal(t, 0, h.CompiledModules(), "the Sampler was the last holder")
	assert.Equal(t, 0, h.LiveInstances())

	// Refused after compiling: its exports' types, its initial memory.
	_, err = h.Load(ctx, wasmFile(t, "badtype"), host.LoadOptions{Namespace: "a"})
	require.ErrorIs(t, err, host.ErrMissingExport)
	assert.Equal(t, 0, h.CompiledModules(), "refused for its exports")
	_, err = h.Load(ctx, wasmFile(t, "bad"), host.LoadOptions{Namespace: "a", Limits: host.Limits{MemoryPages: 1}})
	require.ErrorIs(t, err, host.ErrPluginMemory)
	assert.Equal(t, 0, h.CompiledModules(), "refused for its memory")

	// Dropped by the cache's budget: closed with the last Plugin.
	small := newHost(t, host.NewConfig().WithModuleCacheBytes(2*int64(len(variant(t, greedy, 1000)))))
	var open []*host.Plugin
	for i := range 5 {
		p, err := small.Load(ctx, variant(t, greedy, 100+i), host.LoadOptions{})
		require.NoError(t, err)
		open = append(open, p)
	}
	assert.Equal(t, 5, small.CompiledModules(), "2 cached, 3 dropped but open")
	for _, p := range open {
		require.NoError(t, p.Close())
	}
	assert.Equal(t, 2, small.CompiledModules(), "the 2 cached")
	require.NoError(t, small.Close(ctx))
	assert.Equal(t, 0, small.CompiledModules(), "closed with the Host")

	// A Plugin never closed lets go when the collector finds it unreachable.
	sum := func() string {
		p, err := h.Load(ctx, variant(t, greedy, 3), host.LoadOptions{Namespace: "a"})
		require.NoError(t, err)
		return p.SHA256()
	}()
	assert.True(t, h.Evict("a", sum))
	for i := 0; i < 50 && h.CompiledModules() > 0; i++ {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	assert.Equal(t, 0, h.CompiledModules(), "released by the cleanup")
}
