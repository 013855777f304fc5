package parity

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/gguf"
	"github.com/realizar-host/realizar-host/internal/quantize"
	"github.com/realizar-host/realizar-host/tools/llamaref/internal/reftest"
)

// quantizeParityTypes are the file types whose output is compared with
// llama.cpp's, tensor by tensor.
var quantizeParityTypes = map[string]bool{"Q4_K_M": true, "Q4_K_S": true, "Q8_0": true, "Q4_0": true, "F16": true, "BF16": true}

// Our quantizer against llama.cpp's on the same sources (stories260K and the
// fixtures): every tensor must get the same type and bit-identical data, and
// the metadata must match. Prints the counts per file, and whether the whole
// files are byte-identical.
func TestQuantizeMatchesLlamaCpp(t *testing.T) {
	l := reftest.Lib(t)
	dir := t.TempDir()
	var files, sameFiles, tensors, typeMismatch, dataMismatch int
	for _, q := range quantizedFiles(t, l) {
		if !quantizeParityTypes[q.ftype] {
			continue
		}
		name := filepath.Base(q.path)
		t.Run(name, func(t *testing.T) {
			ft, err := quantize.ParseFileType(q.ftype)
			require.NoError(t, err)
			ours := filepath.Join(dir, name)
			_, err = quantize.File(ours, q.source, quantize.Options{FileType: ft, Threads: 2})
			require.NoError(t, err)
			defer os.Remove(ours)

			want, err := gguf.Open(q.path)
			require.NoError(t, err)
			defer want.Close()
			got, err := gguf.Open(ours)
			require.NoError(t, err)
			defer got.Close()

			var names []string
			for _, ti := range got.Tensors {
				names = append(names, ti.Name)
			}
			var wantNames []string
			for _, ti := range want.Tensors {
				wantNames = append(wantNames, ti.Name)
			}
			assert.Equal(t, wantNames, names, "tensor order")

			nType, nData := 0, 0
			for _, wi := range want.Tensors {
				gi, ok := got.Tensor(wi.Name)
				if !assert.True(t, ok, "%s missing from our output", wi.Name) {
					nType++
					continue
				}
				if gi.Type != wi.Type {
					nType++
					t.Errorf("%s: type %v, llama.cpp %v", wi.Name, gi.Type, wi.Type)
					continue
				}
				wd, err := want.TensorData(wi.Name)
				require.NoError(t, err)
				gd, err := got.TensorData(wi.Name)
				require.NoError(t, err)
				if !bytes.Equal(wd, gd) {
					nData++
					t.Errorf("%s (%v): data differs from llama.cpp's", wi.Name, wi.Type)
				}
			}
			for _, kv := range want.KV {
				v, ok := got.Lookup(kv.Key)
				if assert.True(t, ok, "metadata %s missing", kv.Key) {
					assert.Equal(t, kv.Value, v, "metadata %s", kv.Key)
				}
			}
			assert.Len(t, got.KV, len(want.KV), "metadata count")

			wb, err := os.ReadFile(q.path)
			require.NoError(t, err)
			gb, err := os.ReadFile(ours)
			require.NoError(t, err)
			same := bytes.Equal(wb, gb)
			files++
			if same {
				sameFiles++
			}
			tensors += len(want.Tensors)
			typeMismatch += nType
			dataMismatch += nData
			t.Logf("%-40s tensors %3d  type mismatches %d  data mismatches %d  file byte-identical %v",
				name, len(want.Tensors), nType, nData, same)
		})
	}
	t.Logf("quantize vs llama.cpp: %d files (%d byte-identical), %d tensors: %d type mismatches, %d data mismatches",
		files, sameFiles, tensors, typeMismatch, dataMismatch)
	assert.Positive(t, files)
}

// The speed of our quantizer against llama_model_quantize on the tiny
// fixture to Q4_K_M, both with 2 threads; the better of 2 runs each. The
// figure goes to BENCHMARKS.md; the test only checks both run.
func TestQuantizeSpeed(t *testing.T) {
	l := reftest.Lib(t)
	var src string
	for _, s := range sourceModels(t, l) {
		if strings.Contains(s.path, "fixture-tiny-") {
			src = s.path
		}
	}
	require.NotEmpty(t, src, "tiny fixture")
	dir := t.TempDir()
	out := filepath.Join(dir, "speed.gguf")
	timed := func(run func() error) time.Duration {
		start := time.Now()
		require.NoError(t, run())
		d := time.Since(start)
		os.Remove(out)
		return d
	}
	// Interleaved, so both see the same load on a shared machine.
	ours, theirs := time.Duration(1<<62), time.Duration(1<<62)
	for range 2 {
		theirs = min(theirs, timed(func() error { return l.Quantize(src, out, "Q4_K_M") }))
		ours = min(ours, timed(func() error {
			_, err := quantize.File(out, src, quantize.Options{FileType: quantize.Q4_KM, Threads: 2})
			return err
		}))
	}
	st, err := os.Stat(src)
	require.NoError(t, err)
	mb := float64(st.Size()) / 1e6
	t.Logf("quantize %s (%.0f MB) to Q4_K_M, 2 threads: ours %v (%.0f MB/s), llama.cpp %v (%.0f MB/s), time ratio ours/llama.cpp %.2f",
		filepath.Base(src), mb, ours.Round(time.Millisecond), mb/ours.Seconds(),
		theirs.Round(time.Millisecond), mb/theirs.Seconds(), ours.Seconds()/theirs.Seconds())
}
