package cuda

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"slices"
	"sort"

	"github.com/realizar-host/realizar-host/internal/quant"
)

// sources holds the CUDA C kernels and what scripts/cuda-ptx.sh compiles
// from them: PTX (ptx/<family>.sm<arch>.ptx), which the driver
// JIT-compiles, and CUBIN machine code for exactly sm_<arch>
// (ptx/<family>.sm<arch>.cubin), loaded when the JIT fails.
//
//go:embed kernels/*.cu ptx/*.ptx ptx/*.cubin
var sources embed.FS

// families are the kernel source files, one per family of kernels.
var families = []string{"attention", "elementwise", "gemv", "norm", "rope"}

// archs are the compute capabilities the PTX is compiled for (compute_80:
// Ampere and Ada; compute_90: Hopper). The driver JIT-compiles the newest
// one not above the card's capability.
var archs = []int{80, 90}

// kernelTypes maps every weight type with a GPU kernel to the suffix of its
// kernel names (gemv_<suffix>, embed_<suffix>). It is exactly the list of
// types the CPU forward multiplies (quant.DotFor).
var kernelTypes = map[quant.Type]string{
	quant.F32:  "f32",
	quant.F16:  "f16",
	quant.BF16: "bf16",
	quant.Q4_0: "q4_0",
	quant.Q4_1: "q4_1",
	quant.Q5_0: "q5_0",
	quant.Q5_1: "q5_1",
	quant.Q8_0: "q8_0",
	quant.Q4_K: "q4_k",
	quant.Q5_K: "q5_k",
	quant.Q6_K: "q6_k",
}

// floatType reports whether t's product runs in f32 (no Q8 activation).
func floatType(t quant.Type) bool { return t == quant.F32 || t == quant.F16 || t == quant.BF16 }

// ptxImage returns the embedded PTX of a kernel family for compute capability
// arch (80 or 90).
func ptxImage(family string, arch int) ([]byte, error) {
	return sources.ReadFile(fmt.Sprintf("ptx/%s.sm%d.ptx", family, arch))
}

// cubinImage returns the embedded machine code of a kernel family for compute
// capability arch.0 exactly (80: sm_80, which also runs on 8.6 and 8.9;
// 90: sm_90), an ELF image cuModuleLoadData takes as it is.
func cubinImage(family string, arch int) ([]byte, error) {
	return sources.ReadFile(fmt.Sprintf("ptx/%s.sm%d.cubin", family, arch))
}

// kernelNames is every kernel the forward launches.
func kernelNames() []string {
	names := []string{"quantize_q8", "quantize_q8k", "rmsnorm", "rope_norm", "rope_neox", "kv_write", "attention", "add", "swiglu", "geglu", "scale", "softcap", "moe_add", "argmax", "gather_rows"}
	var typed []string
	for _, suffix := range kernelTypes {
		typed = append(typed, "gemv_"+suffix, "embed_"+suffix)
	}
	slices.Sort(typed)
	return append(names, typed...)
}

// kernelSource returns the CUDA C source of a kernel family.
func kernelSource(family string) ([]byte, error) {
	return sources.ReadFile("kernels/" + family + ".cu")
}

// ptxArch picks the PTX for a card of compute capability major.minor: the
// newest compiled arch not above it. ok is false below 8.0.
func ptxArch(major, minor int) (arch int, ok bool) {
	cc := 10*major + minor
	for _, a := range archs {
		if a <= cc {
			arch, ok = a, true
		}
	}
	return arch, ok
}

// kernelHash is the hex sha256 of every embedded kernel source and PTX
// file, in name order: it changes whenever a kernel does, and keys the
// parity verdict cache.
func kernelHash() string { return hashFiles(sources) }

// hashFiles hashes every file of fsys: name, length and bytes, in name
// order.
func hashFiles(fsys fs.FS) string {
	h := sha256.New()
	var names []string
	_ = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			names = append(names, p)
		}
		return nil
	})
	sort.Strings(names)
	for _, n := range names {
		b, _ := fs.ReadFile(fsys, n)
		fmt.Fprintf(h, "%s %d\n", n, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))
}
