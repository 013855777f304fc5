//go:build !linux

package model

// adviseHuge does nothing where transparent huge pages are not asked for
// by madvise.
func adviseHuge([]byte) {}
