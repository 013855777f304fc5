//go:build !linux

package quant_test

// threadTime has no per-thread clock here: it reports false.
func threadTime() (int64, bool) { return 0, false }
