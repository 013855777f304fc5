//go:build !(386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64 || wasm)

package host

import (
	"encoding/binary"
	"math"
)

// putF32s writes src into dst as little-endian f32 (len(dst) >= 4*len(src)).
func putF32s(dst []byte, src []float32) {
	for i, v := range src {
		binary.LittleEndian.PutUint32(dst[4*i:], math.Float32bits(v))
	}
}

// putI32s writes src into dst as little-endian i32.
func putI32s(dst []byte, src []int32) {
	for i, v := range src {
		binary.LittleEndian.PutUint32(dst[4*i:], uint32(v))
	}
}

// getU32s reads len(dst) little-endian u32 from src (len(src) >=
// 4*len(dst)).
func getU32s(dst []uint32, src []byte) {
	for i := range dst {
		dst[i] = binary.LittleEndian.Uint32(src[4*i:])
	}
}

// applyEditBytes applies the n edits in src (8 bytes each, len(src) >=
// 8n) to logits, in order. It stops at the first id outside
// [0, len(logits)) and returns its index and id; bad is -1 when all
// applied.
func applyEditBytes(src []byte, n int, logits []float32) (bad int, id int32) {
	return applyEditBytesSlow(src, n, logits)
}
