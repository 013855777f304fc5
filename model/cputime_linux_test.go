package model

import "golang.org/x/sys/unix"

// processTime returns the CPU time of this process, all threads, in
// nanoseconds (CLOCK_PROCESS_CPUTIME_ID), and true.
func processTime() (int64, bool) {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &ts) != nil {
		return 0, false
	}
	return ts.Nano(), true
}
