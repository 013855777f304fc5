package cuda

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/internal/quant"
	"github.com/realizar-host/realizar-host/internal/testenv"
)

// hostHarness compiles testdata/unpack_host.cpp (which includes
// kernels/gemv.cu) with the host's C++ compiler. Without one the test
// skips, except under CI=true where it fails.
func hostHarness(t *testing.T) string {
	t.Helper()
	cxx := testenv.Tool(t, "c++", "the kernel unpacking test needs a host C++ compiler (apt install g++)")
	bin := filepath.Join(t.TempDir(), "unpack_host")
	out, err := exec.Command(cxx, "-std=c++14", "-O1", "-Wall", "-Wextra", "-Werror", "-o", bin, "testdata/unpack_host.cpp").CombinedOutput()
	require.NoError(t, err, "%s", out)
	return bin
}

// The kernels' block unpacking (the same source the PTX is compiled from)
// decodes every weight type exactly as package quant does, and the Q8/dp4a
// product formula matches the float product within the activation's
// quantization error.
func TestKernelUnpackMatchesQ4K(t *testing.T) {
	bin := hostHarness(t)
	const rows, cols = 5, 512
	rng := rand.New(rand.NewPCG(3, 4))
	x := make([]float32, cols)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	for typ, name := range kernelTypes {
		t.Run(name, func(t *testing.T) {
			rb, err := typ.RowSize(cols)
			require.NoError(t, err)
			w := make([]byte, rows*rb)
			want := make([]float32, rows*cols)
			for r := range rows {
				v := make([]float32, cols)
				for i := range v {
					v[i] = float32(rng.NormFloat64()*0.05 + 0.01*float64(r))
				}
				require.NoError(t, quant.Quantize(typ, w[r*rb:(r+1)*rb], v))
				require.NoError(t, quant.Dequantize(typ, want[r*cols:(r+1)*cols], w[r*rb:(r+1)*rb]))
			}
			var in bytes.Buffer
			_ = binary.Write(&in, binary.LittleEndian, []uint32{uint32(typ), rows, cols})
			in.Write(w)
			_ = binary.Write(&in, binary.LittleEndian, x)
			cmd := exec.Command(bin)
			cmd.Stdin = &in
			out, err := cmd.Output()
			require.NoError(t, err)
			got := make([]float32, rows*cols+rows)
			require.NoError(t, binary.Read(bytes.NewReader(out), binary.LittleEndian, got))

			for i, v := range want {
				require.InDelta(t, v, got[i], 1e-6*math.Max(1, math.Abs(float64(v))), "weight %d (row %d, index %d)", i, i/cols, i%cols)
			}
			for r := range rows {
				var dot, mag float64
				for i := range cols {
					dot += float64(want[r*cols+i]) * float64(x[i])
					mag += math.Abs(float64(want[r*cols+i]) * float64(x[i]))
				}
				tol := 1e-5 * mag
				if !floatType(typ) {
					tol = 0.01 * mag // Q8 activations
				}
				assert.InDelta(t, dot, got[rows*cols+r], tol, "row %d product", r)
			}
		})
	}
}
