//go:build !(linux && amd64)

package quant

// amxPermitted is false off linux/amd64: ggml's AMX buffer exists on x86
// only, and this package does not probe other kernels for it.
func amxPermitted() bool { return false }
