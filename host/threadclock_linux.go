package host

import (
	"math"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// threadClock is the CPU-time clock of one OS thread (Linux): the thread
// a plugin call runs on, which the calling goroutine is locked to for the
// call (lockThread), read by the call itself and by its watchdog from
// another thread. Its value is the CPU time (user and system) the thread
// has used, in nanoseconds: time the thread waits for a CPU, on a machine
// busier than its cores, does not advance it.
type threadClock int32 // a clock id: MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED)

// lockThread locks the calling goroutine to its OS thread
// (runtime.LockOSThread; nested calls nest, each undone by one
// unlockThread) and returns that thread's CPU clock.
func lockThread() threadClock {
	runtime.LockOSThread()
	// Linux's clock id of a thread's CPU clock, as clock_getcpuclockid
	// builds it: the complement of the thread id, shifted by 3, ORed with
	// CPUCLOCK_PERTHREAD (4) and CPUCLOCK_SCHED (2). Any thread of the
	// process may read it.
	return threadClock(^int32(unix.Gettid())<<3 | 6)
}

// unlockThread undoes one lockThread.
func unlockThread() { runtime.UnlockOSThread() }

// now is the thread's CPU time. A clock that cannot be read (its thread
// gone, which cannot happen while a goroutine is locked to it) reads as
// the longest duration, so that a deadline on it is spent rather than
// never.
func (c threadClock) now() time.Duration {
	var ts unix.Timespec
	if unix.ClockGettime(int32(c), &ts) != nil {
		return math.MaxInt64
	}
	return time.Duration(ts.Nano())
}
