//go:build !linux

package host

import "time"

// threadClock is, where Linux's thread CPU clocks are not at hand, the
// monotonic wall clock: a plugin call's deadline counts the time its
// thread waits for a CPU too. (On Linux it is the thread's CPU time.)
type threadClock struct{}

// clockBase is the wall clock's origin.
var clockBase = time.Now()

// lockThread returns the clock; the goroutine is not locked.
func lockThread() threadClock { return threadClock{} }

// unlockThread undoes lockThread (nothing).
func unlockThread() {}

// now is the monotonic time since clockBase.
func (threadClock) now() time.Duration { return time.Since(clockBase) }
