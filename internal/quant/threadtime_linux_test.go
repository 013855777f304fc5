package quant_test

import "golang.org/x/sys/unix"

// threadTime returns the CPU time of the calling OS thread in
// nanoseconds (CLOCK_THREAD_CPUTIME_ID), and true.
func threadTime() (int64, bool) {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) != nil {
		return 0, false
	}
	return ts.Nano(), true
}
