//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly || android || ios

package gguf

import (
	"fmt"
	"os"
	"syscall"
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
