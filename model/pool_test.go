package model

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every index is visited exactly once, whatever the thread count and grain,
// and worker ids stay in range.
func TestPoolCoversRange(t *testing.T) {
	for _, threads := range []int{1, 2, 3, 8} {
		p := newPool(threads)
		for _, tc := range []struct{ n, grain int }{{0, 1}, {1, 1}, {5, 16}, {100, 1}, {1000, 7}, {4096, 64}} {
			hits := make([]atomic.Int32, tc.n)
			p.run(tc.n, tc.grain, taskFunc(func(worker, lo, hi int) {
				require.GreaterOrEqual(t, worker, 0)
				require.Less(t, worker, threads)
				require.LessOrEqual(t, hi-lo, tc.grain)
				for i := lo; i < hi; i++ {
					hits[i].Add(1)
				}
			}))
			for i := range hits {
				require.EqualValues(t, 1, hits[i].Load(), "threads %d n %d index %d", threads, tc.n, i)
			}
		}
		p.close()
		p.close() // idempotent
		n := 0
		p.run(100, 7, taskFunc(func(_, lo, hi int) { n += hi - lo })) // after close: serial, no panic
		assert.Equal(t, 100, n)
	}
}

// Concurrent callers take turns rather than mixing their loops.
func TestPoolConcurrentCallers(t *testing.T) {
	p := newPool(3)
	defer p.close()
	done := make(chan int64, 4)
	for range 4 {
		go func() {
			var sum atomic.Int64
			for range 50 {
				p.run(300, 8, taskFunc(func(_, lo, hi int) {
					for i := lo; i < hi; i++ {
						sum.Add(int64(i))
					}
				}))
			}
			done <- sum.Load()
		}()
	}
	for range 4 {
		assert.EqualValues(t, 50*300*299/2, <-done)
	}
}

// Helpers that have parked (idle past spinWait) wake for the next loop: a
// loop of one chunk per thread whose chunks wait for each other finishes
// only if every helper takes part. Checked straight after the previous loop
// (helpers spinning) and after a pause (helpers parked), and close stops
// parked helpers.
func TestPoolWakesParkedHelpers(t *testing.T) {
	const threads = 3
	p := newPool(threads)
	for round := range 6 {
		if round%2 == 1 {
			time.Sleep(5 * spinWait)
		}
		var arrived atomic.Int32
		ok := make(chan bool, threads)
		p.run(threads, 1, taskFunc(func(_, _, _ int) {
			arrived.Add(1)
			deadline := time.Now().Add(5 * time.Second)
			for arrived.Load() < threads && time.Now().Before(deadline) {
				runtime.Gosched()
			}
			ok <- arrived.Load() == threads
		}))
		for range threads {
			require.True(t, <-ok, "round %d: a helper did not take part", round)
		}
	}
	time.Sleep(5 * spinWait)
	before := runtime.NumGoroutine()
	p.close()
	// Polled here rather than with assert.Eventually, whose own goroutine
	// would count.
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before-(threads-1) && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	require.LessOrEqual(t, runtime.NumGoroutine(), before-(threads-1), "helpers still running after close")
}

func TestPoolGrain(t *testing.T) {
	p := newPool(2)
	defer p.close()
	assert.Equal(t, 16, p.grainFor(10, 16))
	assert.Equal(t, 125, p.grainFor(1000, 16))
	for _, c := range []struct{ n, minGrain, chunks, want int }{
		{1000, 2, 16, 32}, // 32 chunks over two threads, the last short
		{1000, 40, 16, 40},
		{320, 2, 16, 10},
		{5, 0, 16, 1},
		{1000, 2, 0, 500}, // chunks < 1 taken as 1
	} {
		assert.Equal(t, c.want, p.grainForChunks(c.n, c.minGrain, c.chunks), "%+v", c)
	}
}

// A helper that finishes a loop's last chunk while its caller spins, and is
// then held up before it looks for a parked caller, must not wake the
// caller's next loop: that loop would return with its helper's chunks
// undone, and the pool's count off by one (a later loop could then wait
// forever). The hook holds the helper in that window on every loop; a
// caller woken by another loop's end fails the test.
func TestPoolLateHelperWakesNoLaterLoop(t *testing.T) {
	var early atomic.Int32
	p := newPool(2)
	defer p.close()
	p.hooks.lastDone = func() { time.Sleep(3 * spinWait) }
	p.hooks.woken = func(want, got uint64) {
		if got != want {
			early.Add(1)
		}
	}
	for round := range 100 {
		var hits atomic.Int32
		p.run(2, 1, taskFunc(func(_, _, _ int) {
			hits.Add(1)
			for start := time.Now(); time.Since(start) < spinWait/4; {
			}
		}))
		require.EqualValues(t, 2, hits.Load(), "round %d", round)
	}
	require.Zero(t, early.Load(), "loops woken before their helpers finished")
}

// A wake-up that arrives after its helper has already seen the loop,
// finished it and parked again (run bumps the loop count, then wakes the
// parked helpers; the hook holds run in between on every loop) must not
// make the helper run that loop a second time: the second run read the
// next loop's fields while they were written and took one from its count
// of working helpers, so a later loop could wait forever. The late wake-ups
// must happen (the test reaches the window), the count of working helpers
// never goes below zero, and every loop returns.
func TestPoolLateWakeRunsNoLoopTwice(t *testing.T) {
	var late atomic.Int32
	p := newPool(2)
	defer p.close()
	p.hooks.beforeWake = func() { time.Sleep(3 * spinWait) }
	p.hooks.lateWake = func() { late.Add(1) }
	finished := make(chan error, 1)
	go func() {
		for round := range 100 {
			var hits atomic.Int32
			p.run(2, 1, taskFunc(func(_, _, _ int) { hits.Add(1) }))
			if hits.Load() != 2 {
				finished <- fmt.Errorf("round %d: %d chunks done of 2", round, hits.Load())
				return
			}
			if n := p.pending.Load(); n < 0 {
				finished <- fmt.Errorf("round %d: %d helpers working", round, n)
				return
			}
		}
		time.Sleep(10 * spinWait) // a late wake-up's second loop would be over
		if n := p.pending.Load(); n != 0 {
			finished <- fmt.Errorf("after the last loop: %d helpers working", n)
			return
		}
		finished <- nil
	}()
	select {
	case err := <-finished:
		require.NoError(t, err)
	case <-time.After(time.Minute):
		t.Fatal("a loop never returned")
	}
	assert.Positive(t, late.Load(), "no wake-up came late: the test did not reach the window")
}
