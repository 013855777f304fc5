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

// getU32s reads len(dst) little-endian u32 from src (len(src) >=
// 4*len(dst)). On little-endian machines it is one memmove.
func getU32s(dst []uint32, src []byte) {
	if len(dst) == 0 {
		return
	}
	copy(unsafe.Slice((*byte)(unsafe.Pointer(&dst[0])), 4*len(dst)), src)
}

// edit is one (i32 id, f32 logit) processor edit as it lies in guest memory.
type edit struct {
	id    int32
	logit float32
}

// applyEditBytes applies the n edits in src (8 bytes each, len(src) >=
// 8n) to logits, in order. It stops at the first id outside
// [0, len(logits)) and returns its index and id; bad is -1 when all
// applied. On little-endian machines src is read in place as []edit when
// it is 4-byte aligned.
func applyEditBytes(src []byte, n int, logits []float32) (bad int, id int32) {
	if n == 0 {
		return -1, 0
	}
	if uintptr(unsafe.Pointer(&src[0]))%4 != 0 {
		return applyEditBytesSlow(src, n, logits)
	}
	edits := unsafe.Slice((*edit)(unsafe.Pointer(&src[0])), n)
	for k, e := range edits {
		if uint32(e.id) >= uint32(len(logits)) {
			return k, e.id
		}
		logits[e.id] = e.logit
	}
	return -1, 0
}
