package host_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/abi/wasmfile"
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
	s, err := host.NewSampler(testVocab{n: 8}, p)
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.Reset(1, []int32{0}))
	tok, err := s.Sample([]float32{0, 1, 5, 2, 0, 0, 0, 0})
	require.NoError(t, err)
	assert.Equal(t, int32(2), tok)

	_, err = host.New(context.Background(), host.NewConfig().WithModuleCacheBytes(-1))
	assert.Error(t, err)
}

func hexSum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
