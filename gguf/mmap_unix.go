//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly || android || ios

package gguf

import (
	"fmt"
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// mapFile maps size bytes of f read-only. The mapping outlives f's
// descriptor; unmap releases it. An empty file maps to an empty slice.
func mapFile(f *os.File, size int64) (data []byte, unmap func() error, err error) {
	if size == 0 {
		return []byte{}, nil, nil
	}
	if int64(int(size)) != size {
		return nil, nil, fmt.Errorf("file of %d bytes too large to map", size)
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	return b, func() error { return syscall.Munmap(b) }, nil
}

// releasePages drops the whole pages of b that lie inside the mapping m
// from the process's resident memory (madvise MADV_DONTNEED: for a
// read-only shared file mapping the pages are read from the file again on
// the next access, with the same bytes; where the system takes it as a
// hint only, such as macOS, they may simply stay).
func releasePages(m, b []byte) {
	base := uintptr(unsafe.Pointer(unsafe.SliceData(m)))
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	if lo < base || lo-base >= uintptr(len(m)) {
		return
	}
	start := int(lo - base)
	end := min(start+len(b), len(m))
	page := os.Getpagesize()
	start = (start + page - 1) / page * page
	end = end / page * page
	if start < end {
		_ = unix.Madvise(m[start:end], unix.MADV_DONTNEED)
	}
}
