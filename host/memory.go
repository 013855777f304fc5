package host

import (
	"sync/atomic"

	"github.com/tetratelabs/wazero/experimental"
)

// capAllocator backs one instance's linear memory and refuses to grow it
// past capBytes: memory.grow then returns -1 in the guest, and refused
// records that it happened so a following trap is reported as
// ErrPluginMemory. live counts memories allocated and not yet freed.
//
// A growth below the cap allocates a larger buffer and copies the memory
// into it, which the host's machine may make slow (page faults on a loaded
// VM: 380 ms for 16 MiB was seen). pause and resume, when set, are called
// around that work so the instance stops its call deadline meanwhile: the
// host's time growing the memory is not the guest's, and a guest growing
// toward its cap reaches it (ErrPluginMemory) instead of being cut on the
// way (ErrPluginTimeout). The work is bounded: at most a copy of capBytes
// per doubling.
type capAllocator struct {
	capBytes uint64
	refused  atomic.Bool
	live     *atomic.Int64
	size     atomic.Uint64 // the memory's current size in bytes

	pause, resume func()
	hook          func() // Host.growHook
}

// pages is the memory's current size in 64 KiB pages.
func (a *capAllocator) pages() uint64 { return a.size.Load() / 65536 }

func (a *capAllocator) Allocate(capacity, _ uint64) experimental.LinearMemory {
	a.live.Add(1)
	if capacity > a.capBytes {
		capacity = a.capBytes
	}
	return &cappedMemory{a: a, buf: make([]byte, 0, capacity)}
}

type cappedMemory struct {
	a     *capAllocator
	buf   []byte
	freed bool
}

// Reallocate grows the memory to size bytes, or returns nil past the cap.
func (m *cappedMemory) Reallocate(size uint64) []byte {
	if size > m.a.capBytes {
		m.a.refused.Store(true)
		return nil
	}
	if m.a.pause != nil {
		m.a.pause()
		defer m.a.resume()
	}
	if m.a.hook != nil {
		m.a.hook()
	}
	m.a.size.Store(size)
	if size <= uint64(cap(m.buf)) {
		m.buf = m.buf[:size]
		return m.buf
	}
	// Grow by at least doubling, within the cap, so repeated small grows
	// do not copy every time.
	newCap := 2 * uint64(cap(m.buf))
	if newCap < size {
		newCap = size
	}
	if newCap > m.a.capBytes {
		newCap = m.a.capBytes
	}
	buf := make([]byte, size, newCap)
	copy(buf, m.buf)
	m.buf = buf
	return m.buf
}

func (m *cappedMemory) Free() {
	if !m.freed {
		m.freed = true
		m.a.live.Add(-1)
	}
	m.buf = nil
}

var _ experimental.MemoryAllocator = (*capAllocator)(nil)
