package model

import (
	"sync"
	"sync/atomic"
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
// so a matrix product costs a wake-up per worker, not a goroutine per row.
//
// The calling goroutine works too: a pool of n threads starts n-1 helpers.
// One loop runs at a time; concurrent callers take turns.
type pool struct {
	threads int
	wake    []chan struct{} // one per helper; a send starts one loop's share

	mu    sync.Mutex // held for the duration of one loop
	done  sync.WaitGroup
	fn    task
	n     int
	grain int
	next  atomic.Int64

	closed    bool // set by close under mu; run then works alone
	closeOnce sync.Once
}

// newPool starts threads-1 helper goroutines (threads < 1 is taken as 1).
func newPool(threads int) *pool {
	threads = max(threads, 1)
	p := &pool{threads: threads, wake: make([]chan struct{}, threads-1)}
	for i := range p.wake {
		c := make(chan struct{})
		p.wake[i] = c
		go p.helper(i+1, c)
	}
	return p
}

func (p *pool) helper(worker int, wake <-chan struct{}) {
	for range wake {
		p.work(worker)
		p.done.Done()
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
	helpers := min(len(p.wake), (n+grain-1)/grain-1)
	p.done.Add(helpers)
	for _, c := range p.wake[:helpers] {
		c <- struct{}{}
	}
	p.work(0)
	p.done.Wait()
	p.fn = nil
}

// grainFor picks a chunk length for n items so that each thread gets about
// four chunks (load balance) and no chunk is shorter than minGrain.
func (p *pool) grainFor(n, minGrain int) int {
	g := (n + 4*p.threads - 1) / (4 * p.threads)
	return max(g, minGrain, 1)
}

// close stops the helpers; later runs work on the calling goroutine alone.
func (p *pool) close() {
	p.closeOnce.Do(func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.closed = true
		for _, c := range p.wake {
			close(c)
		}
	})
}
