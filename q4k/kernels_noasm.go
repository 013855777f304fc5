//go:build !amd64 || purego

package q4k

// quantizeQ8K encodes whole Q8_K blocks: len(x) = 256*nb, len(dst) = 292*nb.
func quantizeQ8K(dst []byte, x []float32) { quantizeQ8KRef(dst, x) }
