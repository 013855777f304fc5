package host

import (
	"context"
	"crypto/sha256"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/abi/wasmfile"
)

func uleb(b []byte, v int) []byte { return wasmfile.AppendU32(b, uint32(v)) }

// nestedModule is a module of one function () -> () of depth nested
// blocks: a compile bomb when deep (wazero's time grows with the square).
func nestedModule(depth int) []byte {
	body := []byte{0}
	for range depth {
		body = append(body, 0x02, 0x40)
	}
	for range depth {
		body = append(body, 0x0B)
	}
	body = append(body, 0x0B)
	m := append([]byte(nil), wasmfile.Magic...)
	m = append(m, 1, 4, 1, 0x60, 0, 0, 3, 2, 1, 0)
	code := uleb(uleb(nil, 1), len(body))
	code = append(code, body...)
	m = append(m, wasmfile.SectionCode)
	m = uleb(m, len(code))
	return append(m, code...)
}

func newCompileHost(t *testing.T, cfg Config) *Host {
	h, err := New(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.Close(context.Background()) })
	return h
}

// A module past the code limits is refused by the pre-scan, before any
// compilation: ErrTooLarge with the *wasmfile.CodeLimitError.
func TestCompileRefusesCodeLimits(t *testing.T) {
	h := newCompileHost(t, NewConfig())
	bomb := nestedModule(45_000) // the 90 KB module that took 5-7 s to compile
	start := time.Now()
	_, err := h.compile(context.Background(), cacheKey{sum: sha256.Sum256(bomb)}, bomb)
	assert.ErrorIs(t, err, ErrTooLarge)
	var le *wasmfile.CodeLimitError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, "depth", le.Limit)
	assert.Less(t, time.Since(start), 2*time.Second, "refused by the scan, not compiled")
	n, _ := h.CachedModules()
	assert.Zero(t, n, "nothing refused is kept")
}

// A slow compilation holds no lock: a Load of a cached module goes on
// while it runs; a second compile of the same module waits for it; the
// compile timeout and the caller's context stop it.
func TestCompileOutsideTheLock(t *testing.T) {
	h := newCompileHost(t, NewConfig().WithCodeLimits(wasmfile.CodeLimits{}))
	fast := nestedModule(2)
	_, err := h.compile(context.Background(), cacheKey{sum: sha256.Sum256(fast)}, fast)
	require.NoError(t, err)

	slow := nestedModule(4000) // ~0.3-0.9 s on this machine
	slowDone := make(chan error, 2)
	for range 2 {
		go func() {
			_, err := h.compile(context.Background(), cacheKey{sum: sha256.Sum256(slow)}, slow)
			slowDone <- err
		}()
	}
	time.Sleep(20 * time.Millisecond)
	_, err = h.compile(context.Background(), cacheKey{sum: sha256.Sum256(fast)}, fast)
	require.NoError(t, err)
	select {
	case err := <-slowDone:
		t.Fatalf("the slow compile ended (%v) before the cached Load: the lock was held", err)
	default:
	}
	require.NoError(t, <-slowDone)
	require.NoError(t, <-slowDone)
	n, _ := h.CachedModules()
	assert.Equal(t, 2, n, "the slow module compiled once and is cached")

	h2 := newCompileHost(t, NewConfig().WithCodeLimits(wasmfile.CodeLimits{}).WithCompileTimeout(5*time.Millisecond))
	_, err = h2.compile(context.Background(), cacheKey{sum: sha256.Sum256(slow)}, slow)
	assert.ErrorIs(t, err, ErrTooLarge, "past the compile timeout")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = h2.compile(ctx, cacheKey{sum: sha256.Sum256(slow)}, slow)
	assert.True(t, errors.Is(err, context.Canceled), "%v", err)
	n, _ = h2.CachedModules()
	assert.Zero(t, n)
}

// An Evict while its module compiles: the compilation ends uncached, and
// its code is closed when its caller's hold is released.
func TestEvictWhileCompiling(t *testing.T) {
	h := newCompileHost(t, NewConfig().WithCodeLimits(wasmfile.CodeLimits{}))
	slow := nestedModule(4000) // ~0.3-0.9 s on this machine
	key := cacheKey{ns: "a", sum: sha256.Sum256(slow)}
	type result struct {
		m   *module
		err error
	}
	done := make(chan result, 1)
	go func() {
		m, err := h.compile(context.Background(), key, slow)
		done <- result{m, err}
	}()
	for running := false; !running; time.Sleep(time.Millisecond) {
		h.mu.Lock()
		_, running = h.compiling[key]
		h.mu.Unlock()
	}
	assert.False(t, h.evict(key, nil), "not cached yet")
	r := <-done
	require.NoError(t, r.err)
	n, _ := h.CachedModules()
	assert.Zero(t, n, "evicted while compiling: not cached")
	assert.Equal(t, 1, h.CompiledModules(), "the caller's hold")
	r.m.release()
	assert.Equal(t, 0, h.CompiledModules())
}
