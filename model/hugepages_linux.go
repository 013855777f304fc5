package model

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// adviseHuge asks the kernel to back the whole huge pages inside b with
// transparent huge pages (madvise MADV_HUGEPAGE) when b is first written.
// A hint: where the kernel declines (THP off, no free huge pages) b keeps
// base pages, with the same contents.
func adviseHuge(b []byte) {
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	start := (lo + hugePage - 1) &^ (hugePage - 1)
	end := (lo + uintptr(len(b))) &^ (hugePage - 1)
	if start >= end {
		return
	}
	_ = unix.Madvise(b[start-lo:end-lo], unix.MADV_HUGEPAGE)
}
