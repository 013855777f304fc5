package parity

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/gguf"
	"github.com/realizar-host/realizar-host/internal/quant"
	"github.com/realizar-host/realizar-host/tools/llamaref/internal/reftest"
	"github.com/realizar-host/realizar-host/tools/llamaref/ref"
)

// coveredTypes are the tensor types the quantized files must hold between
// them: every type a Q4_K_M file can hold, BF16, and Q5_1 (llama.cpp's
// fallback for Q5_K on rows that are not a multiple of 256, which Q4_K_S
// files hold).
var coveredTypes = []uint32{
	ref.TypeBF16, ref.TypeF16, ref.TypeQ4_0, ref.TypeQ5_0, ref.TypeQ8_0,
	ref.TypeQ4_K, ref.TypeQ5_K, ref.TypeQ6_K, ref.TypeQ5_1,
}

// quantized is a model file quantized by llama.cpp.
type quantized struct {
	source, ftype, path string
}

var (
	quantizeOnce sync.Once
	quantizeDir  string
	quantizedSet []quantized
	quantizeErr  error
)

// quantizedFiles quantizes every source model to every file type once per
// test binary, into a folder removed by TestMain.
func quantizedFiles(t *testing.T, l *ref.Lib) []quantized {
	t.Helper()
	sources := sourceModels(t, l)
	quantizeOnce.Do(func() {
		quantizeDir, quantizeErr = os.MkdirTemp("", "llamaref-parity-")
		if quantizeErr != nil {
			return
		}
		for _, src := range sources {
			for _, ft := range src.ftypes {
				base := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(src.path), ".gguf"), "-F32")
				out := filepath.Join(quantizeDir, base+"-"+ft+".gguf")
				if quantizeErr = l.Quantize(src.path, out, ft); quantizeErr != nil {
					return
				}
				quantizedSet = append(quantizedSet, quantized{src.path, ft, out})
			}
		}
	})
	require.NoError(t, quantizeErr)
	return quantizedSet
}

func TestMain(m *testing.M) {
	code := m.Run()
	for _, dir := range []string{quantizeDir, fixtureDir, cliDir} {
		if dir != "" {
			os.RemoveAll(dir)
		}
	}
	os.Exit(code)
}

// Every tensor of every llama.cpp-quantized file decodes with quant exactly as
// with ggml's to_float, and between them the files hold every type of
// coveredTypes.
func TestDequantizeQuantizedFiles(t *testing.T) {
	l := reftest.Lib(t)
	seen := map[uint32]int{}
	for _, q := range quantizedFiles(t, l) {
		t.Run(filepath.Base(q.path), func(t *testing.T) {
			f, err := gguf.Open(q.path)
			require.NoError(t, err)
			defer f.Close()
			for _, ti := range f.Tensors {
				if !quant.Type(ti.Type).Known() {
					t.Errorf("%s: type %s is not implemented by quant", ti.Name, typeName(l, uint32(ti.Type)))
					continue
				}
				data, err := f.TensorData(ti.Name)
				require.NoError(t, err)
				n := int(ti.Elements())
				want, err := l.Dequantize(uint32(ti.Type), data, n)
				require.NoError(t, err, ti.Name)
				ok, at := sameBits(want, ourDequant(t, uint32(ti.Type), data, n))
				assert.True(t, ok, "%s (%s): first difference at value %d", ti.Name, typeName(l, uint32(ti.Type)), at)
				seen[uint32(ti.Type)]++
			}
		})
	}
	var summary []string
	for _, typ := range coveredTypes {
		summary = append(summary, fmt.Sprintf("%s %d", typeName(l, typ), seen[typ]))
		assert.Positive(t, seen[typ], "no tensor of type %s in any quantized file", typeName(l, typ))
	}
	t.Logf("tensors compared bit for bit, by type: %s", strings.Join(summary, ", "))
}

// Our GGUF reader sees the same tensor table as ggml's (gguf_init_from_file):
// names, types, dims, absolute offsets and sizes, in order.
func TestTensorTables(t *testing.T) {
	l := reftest.Lib(t)
	var paths []string
	for _, s := range sourceModels(t, l) {
		paths = append(paths, s.path)
	}
	for _, q := range quantizedFiles(t, l) {
		paths = append(paths, q.path)
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			want, err := l.ReadGGUF(path)
			require.NoError(t, err)
			f, err := gguf.Open(path)
			require.NoError(t, err)
			defer f.Close()
			assert.Equal(t, want.Version, f.Version)
			assert.Equal(t, int64(want.Alignment), f.Alignment)
			require.Len(t, f.Tensors, len(want.Tensors))
			for i, ti := range f.Tensors {
				got := ref.TensorInfo{
					Name:   ti.Name,
					Type:   uint32(ti.Type),
					Dims:   trimDims(ti.Dims),
					Offset: f.DataOffset(ti.Shard) + int64(ti.Offset),
					Size:   ti.Size,
				}
				assert.Equal(t, want.Tensors[i], got)
			}
			arch, _ := f.String("general.architecture")
			assert.Equal(t, want.Architecture, arch)
		})
	}
}

// trimDims drops trailing 1s as ggml's ne does (keeping one entry).
func trimDims(d []int64) []int64 {
	d = append([]int64(nil), d...)
	for len(d) > 1 && d[len(d)-1] == 1 {
		d = d[:len(d)-1]
	}
	return d
}

// histogramString renders a type histogram sorted by name.
func histogramString(h map[string]int) string {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s:%d", k, h[k])
	}
	return strings.Join(parts, " ")
}
