package model

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// task is the body of a data-parallel loop: do processes items [lo, hi) on
// worker (0 <= worker < threads, for per-thread scratch).
//
// The per-token loops pass a pointer to a struct their Step reuses, which
// puts no allocation on the decode path (a closure handed to the pool would
// escape to the heap on every call); taskFunc adapts a function elsewhere.
type task interface {
	do(worker, lo, hi int)
}

// taskFunc adapts a function to task.
type taskFunc func(worker, lo, hi int)

func (f taskFunc) do(worker, lo, hi int) { f(worker, lo, hi) }

// pool runs data-parallel loops on a fixed set of goroutines started once,
// so a matrix product costs no goroutine start.
//
// The calling goroutine works too: a pool of n threads starts n-1 helpers.
// One loop runs at a time; concurrent callers take turns.
//
// A decode step runs about five loops per layer, a few microseconds apart.
// A helper parked on a channel took about 60 µs to start even at best (2-core
// VM, 2000 loops: the fastest tenth), longer than a small product, so the
// caller often did all the work alone; spinning, the fastest tenth start
// within 0.5 µs. Helpers therefore spin (yielding to other
// goroutines) for up to spinWait after each loop, watching for the next,
// and only then park; the caller likewise spins on the helpers' finish
// before it parks. Between tokens (sampling, I/O) they park.
type pool struct {
	threads int
	helpers []helper

	mu    sync.Mutex // held for the duration of one loop
	fn    task
	n     int
	grain int
	next  atomic.Int64

	gen     atomic.Uint64 // loop count; a new value starts the helpers
	pending atomic.Int64  // helpers still working on the current loop
	waiting atomic.Uint64 // the loop count the caller is parked on done for; 0: none
	done    chan uint64   // wakes the parked caller with the loop count finished (buffer 1)
	stop    atomic.Bool   // set by close: helpers exit

	closed    bool // set by close under mu; run then works alone
	hooks     poolHooks
	closeOnce sync.Once
}

// helper is one helper goroutine's parking state.
type helper struct {
	parked atomic.Bool   // parked (or about to) on wake
	wake   chan struct{} // buffer 1: one send per parked → awake switch
}

// spinWait is how long an idle helper (or the waiting caller) keeps
// polling before it parks: longer than the gaps between one token's loops,
// short against the time between tokens.
const spinWait = 100 * time.Microsecond

// newPool starts threads-1 helper goroutines (threads < 1 is taken as 1).
func newPool(threads int) *pool {
	threads = max(threads, 1)
	p := &pool{threads: threads, helpers: make([]helper, threads-1), done: make(chan uint64, 1)}
	for i := range p.helpers {
		p.helpers[i].wake = make(chan struct{}, 1)
		go p.helper(i + 1)
	}
	return p
}

func (p *pool) helper(worker int) {
	h := &p.helpers[worker-1]
	var seen uint64 // the count newPool left; a run may bump it before this goroutine starts
	for {
		seen = p.await(h, seen)
		if p.stop.Load() {
			return
		}
		p.work(worker)
		if p.pending.Add(-1) == 0 {
			if p.hooks.lastDone != nil {
				p.hooks.lastDone()
			}
			// Only the caller of this very loop is woken: by now the caller
			// may have seen pending reach zero while spinning, returned and
			// started the next loop, whose wait must not take this wake-up.
			if p.waiting.CompareAndSwap(seen, 0) {
				p.done <- seen
			}
		}
	}
}

// poolHooks are the tests' hooks (nil otherwise), set on a pool before its
// first loop. lastDone runs in the helper that finished a loop's last
// chunk, between its count reaching zero and its wake-up of a parked
// caller: the window in which the caller can return and start its next
// loop. woken runs in a parked caller once woken, with the loop count it
// waited for and the one its wake-up finished. beforeWake runs in run
// between bumping the loop count and waking the parked helpers; lateWake
// in a helper woken by a wake-up that found no new loop (see await).
type poolHooks struct {
	lastDone, beforeWake, lateWake func()
	woken                          func(want, got uint64)
}

// await returns the loop count once it differs from seen: spinning for up
// to spinWait, then parked on h.wake.
//
// Parking is a handshake on h.parked: the helper sets it and then reads
// gen; run bumps gen and then clears it, sending a wake-up if it did. Go's
// atomics are sequentially consistent, so either the helper sees the new
// count or run sees the flag.
//
// A wake-up can come late: run bumps gen before it wakes the parked
// helpers, so a helper can see the new count while spinning, finish that
// loop and park again before run's wake-up for it arrives. Such a wake-up
// finds the count this helper has already done; it parks again rather than
// run that loop a second time (which read the next loop's fields as they
// were written and took one from its count of helpers still working).
func (p *pool) await(h *helper, seen uint64) uint64 {
	if spinUntil(func() bool { return p.gen.Load() != seen }) {
		return p.gen.Load()
	}
	for {
		h.parked.Store(true)
		if g := p.gen.Load(); g != seen && h.parked.CompareAndSwap(true, false) {
			return g
		}
		<-h.wake
		if g := p.gen.Load(); g != seen {
			return g
		}
		if p.hooks.lateWake != nil {
			p.hooks.lateWake()
		}
	}
}

// spinUntil polls cond, yielding the processor between polls, until it
// holds (true) or spinWait has passed (false).
func spinUntil(cond func() bool) bool {
	var deadline time.Time
	for i := 0; ; i++ {
		if cond() {
			return true
		}
		if i%64 == 0 {
			now := time.Now()
			if i == 0 {
				deadline = now.Add(spinWait)
			} else if now.After(deadline) {
				return false
			}
		}
		runtime.Gosched()
	}
}

// work claims chunks of [0, n) until none are left.
func (p *pool) work(worker int) {
	n, g := int64(p.n), int64(p.grain)
	for {
		lo := p.next.Add(g) - g
		if lo >= n {
			return
		}
		p.fn.do(worker, int(lo), int(min(lo+g, n)))
	}
}

// run calls fn.do over disjoint ranges [lo, hi) covering [0, n), each at
// most grain long (grain >= 1), on all threads, and returns when all are
// done. worker (0 <= worker < threads) identifies the goroutine, for
// per-thread scratch; no two calls with the same worker overlap in time.
// Chunks are claimed dynamically, so a slow core does not hold the others.
func (p *pool) run(n, grain int, fn task) {
	if n <= 0 {
		return
	}
	grain = max(grain, 1)
	if p.threads == 1 || n <= grain {
		for lo := 0; lo < n; lo += grain {
			fn.do(0, lo, min(lo+grain, n))
		}
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		for lo := 0; lo < n; lo += grain {
			fn.do(0, lo, min(lo+grain, n))
		}
		return
	}
	p.fn, p.n, p.grain = fn, n, grain
	p.next.Store(0)
	p.pending.Store(int64(len(p.helpers)))
	gen := p.gen.Add(1)
	if p.hooks.beforeWake != nil {
		p.hooks.beforeWake()
	}
	p.wakeParked()
	p.work(0)
	p.wait(gen)
	p.fn = nil
}

// wakeParked sends a wake-up to every parked helper (see await).
func (p *pool) wakeParked() {
	for i := range p.helpers {
		if h := &p.helpers[i]; h.parked.CompareAndSwap(true, false) {
			h.wake <- struct{}{}
		}
	}
}

// wait returns once every helper has finished loop gen: spinning for up to
// spinWait, then parked on done (the same handshake as await, on
// p.waiting, which holds gen so that a helper late from the previous loop
// cannot wake it).
func (p *pool) wait(gen uint64) {
	if spinUntil(func() bool { return p.pending.Load() == 0 }) {
		return
	}
	p.waiting.Store(gen)
	if p.pending.Load() == 0 && p.waiting.CompareAndSwap(gen, 0) {
		return
	}
	got := <-p.done
	if p.hooks.woken != nil {
		p.hooks.woken(gen, got)
	}
}

// grainFor picks a chunk length for n items so that each thread gets about
// four chunks (load balance) and no chunk is shorter than minGrain.
func (p *pool) grainFor(n, minGrain int) int { return p.grainForChunks(n, minGrain, 4) }

// grainForChunks is grainFor with about chunks chunks a thread (chunks >=
// 1). A loop's threads finish apart by up to one chunk, on average half
// of one, which the first to finish spends waiting.
func (p *pool) grainForChunks(n, minGrain, chunks int) int {
	chunks = max(chunks, 1) * p.threads
	return max((n+chunks-1)/chunks, minGrain, 1)
}

// close stops the helpers; later runs work on the calling goroutine alone.
func (p *pool) close() {
	p.closeOnce.Do(func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.closed = true
		p.stop.Store(true)
		p.gen.Add(1)
		p.wakeParked()
	})
}
