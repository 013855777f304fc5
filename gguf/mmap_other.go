//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly || android || ios)

package gguf

import (
	"fmt"
	"io"
	"os"
)

// mapFile reads the whole of f: on this system the package does not map
// files. unmap is nil; the garbage collector frees the bytes.
func mapFile(f *os.File, size int64) (data []byte, unmap func() error, err error) {
	if int64(int(size)) != size {
		return nil, nil, fmt.Errorf("file of %d bytes too large to read", size)
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, nil, err
	}
	return b, nil, nil
}

// releasePages does nothing: on this system no file is mapped.
func releasePages(m, b []byte) {}
