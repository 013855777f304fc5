package cuda

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every kernel of kernels/*.cu, compiled as host C++ under the emulator in
// testdata/emu (fibers for threads, warp shuffles and barriers that
// rendezvous as on the device), against plain host references: the Q8
// encoder, every weight type's product and embedding lookup, RMSNorm, both
// RoPE pairings with and without factors, the KV-cache write, GQA attention
// over a batch, SwiGLU, the residual add and argmax (ties included).
func TestKernelsOnEmulator(t *testing.T) {
	hostHarness(t) // skips (or fails under CI) without a C++ compiler
	dir := t.TempDir()
	flags := []string{"-std=c++17", "-O0", "-Wall", "-Wextra", "-Werror"}
	emu := append(append([]string{}, flags...), "-DKERNEL_EMU", "-include", "testdata/emu/emu.h")
	var objs []string
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	compile := func(out string, args ...string) {
		obj := filepath.Join(dir, out)
		objs = append(objs, obj)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if b, err := exec.Command("c++", append(args, "-c", "-o", obj)...).CombinedOutput(); err != nil {
				errs <- fmt.Errorf("%s: %w\n%s", out, err, b)
			}
		}()
	}
	for _, fam := range []string{"norm", "rope", "attention", "elementwise"} {
		compile(fam+".o", append(append([]string{}, emu...), "-x", "c++", "kernels/"+fam+".cu")...)
	}
	compile("emu.o", append(append([]string{}, flags...), "testdata/emu/emu.cpp")...)
	compile("main.o", append(append([]string{}, emu...), "testdata/emu/kernels_host.cpp")...) // includes gemv.cu
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	bin := filepath.Join(dir, "kernels_host")
	b, err := exec.Command("c++", append(objs, "-o", bin)...).CombinedOutput()
	require.NoError(t, err, "%s", b)
	out, err := exec.Command(bin).CombinedOutput()
	t.Logf("\n%s", out)
	require.NoError(t, err, "a kernel disagrees with its reference:\n%s", out)
}
