//go:build linux && amd64

package quant

import (
	"syscall"
	"unsafe"
)

// amxPermitted reports whether Linux supports the AMX tile data state
// (arch_prctl ARCH_GET_XCOMP_SUPP lists XFEATURE_XTILEDATA), the condition
// under which ggml's request for it (ARCH_REQ_XCOMP_PERM) succeeds. It only
// reads; it asks for nothing.
func amxPermitted() bool {
	const (
		archGetXcompSupp  = 0x1021
		xfeatureXtiledata = 18
	)
	var mask uint64
	_, _, errno := syscall.RawSyscall(syscall.SYS_ARCH_PRCTL, archGetXcompSupp, uintptr(unsafe.Pointer(&mask)), 0)
	return errno == 0 && mask&(1<<xfeatureXtiledata) != 0
}
