package cuda

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/internal/quant"
)

// The GPU has a kernel for exactly the weight types the CPU forward
// multiplies: no more (a type the CPU would refuse) and no fewer (a file
// the CPU runs that the GPU could not load).
func TestKernelTypesMatchCPU(t *testing.T) {
	for typ := quant.Type(0); typ < 64; typ++ {
		_, cpuErr := quant.DotFor(typ)
		cpu := cpuErr == nil && typ != quant.Q8_1 && typ != quant.Q8_K // activation-only types
		_, gpu := kernelTypes[typ]
		assert.Equal(t, cpu, gpu, "type %v: CPU has a kernel: %v, GPU: %v", typ, cpu, gpu)
	}
	assert.Len(t, kernelTypes, 11)
}

var entryRE = regexp.MustCompile(`extern "C" __global__ void (\w+)\(`)

// Every kernel the sources declare is in the committed PTX of both archs,
// each PTX targets its arch, and the forward's kernel names exist in the
// PTX and in the CUBIN of both archs.
func TestPTXEmbedded(t *testing.T) {
	var all []string
	for _, fam := range families {
		src, err := kernelSource(fam)
		require.NoError(t, err, fam)
		names := entryRE.FindAllStringSubmatch(string(src), -1)
		// Kernels instantiated through macros: GEMV_Q(name, T) and friends.
		names = append(names, regexp.MustCompile(`(?m)^(?:GEMV_Q|GEMV_F|EMBED)\((\w+),`).FindAllStringSubmatch(string(src), -1)...)
		require.NotEmpty(t, names, fam)
		for _, arch := range archs {
			ptx, err := ptxImage(fam, arch)
			require.NoError(t, err, "%s sm%d", fam, arch)
			assert.Contains(t, string(ptx), ".target sm_"+strconv.Itoa(arch), "%s sm%d", fam, arch)
			assert.NotContains(t, string(ptx), ".extern .func", "%s sm%d calls an undefined device function", fam, arch)
			for _, n := range names {
				if n[1] == "name" {
					continue // the macro's own definition
				}
				assert.Contains(t, string(ptx), ".entry "+n[1]+"(", "%s sm%d", fam, arch)
			}
		}
		ptx, _ := ptxImage(fam, archs[0])
		all = append(all, string(ptx))
	}
	joined := strings.Join(all, "\n")
	for _, n := range kernelNames() {
		assert.Contains(t, joined, ".entry "+n+"(", n)
	}
	for _, arch := range archs {
		var syms []string
		for _, fam := range families {
			bin, err := cubinImage(fam, arch)
			require.NoError(t, err, "%s sm%d", fam, arch)
			require.True(t, strings.HasPrefix(string(bin), "\x7fELF"), "%s sm%d is an ELF image", fam, arch)
			syms = append(syms, string(bin))
		}
		for _, n := range kernelNames() {
			assert.Contains(t, strings.Join(syms, ""), "\x00"+n+"\x00", "sm%d CUBIN has kernel %s", arch, n)
		}
	}
	gemv, _ := ptxImage("gemv", 90)
	assert.Contains(t, string(gemv), "dp4a.s32.s32", "the integer products use dp4a")
}

func TestKernelHash(t *testing.T) {
	h := kernelHash()
	assert.Regexp(t, `^[0-9a-f]{64}$`, h)
	assert.Equal(t, h, kernelHash(), "stable")

	a := fstest.MapFS{"kernels/a.cu": {Data: []byte("x")}, "ptx/a.sm80.ptx": {Data: []byte("y")}}
	b := fstest.MapFS{"kernels/a.cu": {Data: []byte("x")}, "ptx/a.sm80.ptx": {Data: []byte("z")}}
	c := fstest.MapFS{"kernels/a.cu": {Data: []byte("xy")}, "ptx/a.sm80.ptx": {Data: []byte("")}}
	assert.Equal(t, hashFiles(a), hashFiles(a))
	assert.NotEqual(t, hashFiles(a), hashFiles(b), "one PTX byte changes the hash")
	assert.NotEqual(t, hashFiles(a), hashFiles(c), "moving bytes between files changes the hash")
}

func TestPTXArch(t *testing.T) {
	for _, tc := range []struct {
		major, minor, arch int
		ok                 bool
	}{
		{7, 5, 0, false}, {8, 0, 80, true}, {8, 6, 80, true}, {8, 9, 80, true},
		{9, 0, 90, true}, {10, 0, 90, true}, {12, 0, 90, true},
	} {
		arch, ok := ptxArch(tc.major, tc.minor)
		assert.Equal(t, tc.ok, ok, "%d.%d", tc.major, tc.minor)
		if ok {
			assert.Equal(t, tc.arch, arch, "%d.%d", tc.major, tc.minor)
		}
	}
}
