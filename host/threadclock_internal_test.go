//go:build linux

package host

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestThreadClock: a thread's clock advances with its work, not while it
// sleeps, and another thread reads the same clock (as a call's watchdog
// does).
func TestThreadClock(t *testing.T) {
	clk := lockThread()
	defer unlockThread()
	t0 := clk.now()
	time.Sleep(100 * time.Millisecond)
	slept := clk.now() - t0
	assert.Less(t, slept, 20*time.Millisecond, "a sleeping thread uses no CPU time")

	t0 = clk.now()
	for w := time.Now(); time.Since(w) < 30*time.Millisecond; {
	}
	worked := clk.now() - t0
	assert.Greater(t, worked, time.Millisecond, "a working thread's clock advances")

	fromElsewhere := make(chan time.Duration)
	go func() { fromElsewhere <- clk.now() }()
	assert.GreaterOrEqual(t, <-fromElsewhere, t0+worked, "another thread reads the clock")
}
