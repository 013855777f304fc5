package host

import (
	"context"
	"sync/atomic"

	"github.com/tetratelabs/wazero"
)

// module is one compiled module. Its code is held by the Host's cache
// while the module is in it, by each open Plugin of it and by each open
// adapter running it (so by every live instance: an adapter owns its
// instances); the last hold released closes it at once. Closing drops
// wazero's compilation cache entry, and wazero unmaps the code at the
// next collection, no instance referring to it any more.
type module struct {
	h        *Host
	key      cacheKey
	compiled wazero.CompiledModule
	// base is the first Plugin of the module, for sha256-only manifests;
	// it holds nothing (the module holds it).
	base *Plugin
	// holds counts the holds; 0 once closed, never raised again.
	holds atomic.Int64
}

// newModule wraps c, compiled for key, with one hold: the caller's.
func (h *Host) newModule(key cacheKey, c wazero.CompiledModule) *module {
	m := &module{h: h, key: key, compiled: c}
	m.holds.Store(1)
	h.open.Add(1)
	return m
}

// acquire adds a hold on m's code. It reports false, adding none, once m
// is closed.
func (m *module) acquire() bool {
	for {
		n := m.holds.Load()
		if n == 0 {
			return false
		}
		if m.holds.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// release drops a hold; the last one closes m's code.
func (m *module) release() {
	switch n := m.holds.Add(-1); {
	case n == 0:
		_ = m.compiled.Close(context.Background())
		m.h.open.Add(-1)
	case n < 0:
		panic("host: compiled module released more often than held")
	}
}

// releaseAll releases each of ms.
func releaseAll(ms []*module) {
	for _, m := range ms {
		m.release()
	}
}

// hold is one holder's claim on a module's code (a Plugin's, an
// adapter stage's), released at most once.
type hold struct {
	m    *module
	done atomic.Bool
}

// newHold acquires a hold on m; nil once m is closed.
func newHold(m *module) *hold {
	if !m.acquire() {
		return nil
	}
	return &hold{m: m}
}

// release releases the hold the first time it is called; nil is a no-op.
func (h *hold) release() {
	if h != nil && h.done.CompareAndSwap(false, true) {
		h.m.release()
	}
}
