//go:build 386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64 || wasm

package host

import "unsafe"

// putF32s writes src into dst as little-endian f32 (len(dst) >= 4*len(src)).
// On little-endian machines it is one memmove.
func putF32s(dst []byte, src []float32) {
	if len(src) == 0 {
		return
	}
	copy(dst, unsafe.Slice((*byte)(unsafe.Pointer(&src[0])), 4*len(src)))
}

// putI32s writes src into dst as little-endian i32.
func putI32s(dst []byte, src []int32) {
	if len(src) == 0 {
		return
	}
	copy(dst, unsafe.Slice((*byte)(unsafe.Pointer(&src[0])), 4*len(src)))
}
