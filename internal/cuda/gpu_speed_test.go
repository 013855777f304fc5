//go:build cuda || cudaemu

package cuda

// The speed runs of scripts/gpu-check.sh: the device's copy bandwidth, and
// prefill and decode throughput on each fixture with decode's achieved
// weight bandwidth against it. On the emulator they run with a few tokens
// and a small copy, to test the code, and their figures mean nothing.

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/forward"
	"github.com/realizar-host/realizar-host/gguf"
)

// speedFixtures is REALIZAR_GPU_SPEED_FIXTURES (comma-separated) when set,
// else gpuFixtures: the speed runs may take files too large for the CPU
// reference of the gate and greedy tests (the 7B-shaped fixture).
func speedFixtures(t *testing.T) []string {
	t.Helper()
	var paths []string
	for _, p := range strings.Split(os.Getenv("REALIZAR_GPU_SPEED_FIXTURES"), ",") {
		if p = strings.TrimSpace(p); p != "" {
			paths = append(paths, p)
		}
	}
	if len(paths) > 0 {
		return paths
	}
	if emulated {
		return platformFixtures(t)[:1]
	}
	return gpuFixtures(t)
}

// copyBandwidth times reps device-to-device copies of n bytes on d (after
// one untimed copy) and returns the memory traffic per second: 2n bytes
// (read and written) per copy, as NVIDIA's bandwidthTest counts it.
func copyBandwidth(d backend, n int64, reps int) (float64, error) {
	src, err := d.alloc(n, "bandwidth source")
	if err != nil {
		return 0, err
	}
	defer d.free(&src)
	dst, err := d.alloc(n, "bandwidth destination")
	if err != nil {
		return 0, err
	}
	defer d.free(&dst)
	if err := d.dtod(dst, src, n); err != nil {
		return 0, err
	}
	if err := d.sync(); err != nil {
		return 0, err
	}
	t0 := time.Now()
	for range reps {
		if err := d.dtod(dst, src, n); err != nil {
			return 0, err
		}
	}
	if err := d.sync(); err != nil {
		return 0, err
	}
	return 2 * float64(n) * float64(reps) / time.Since(t0).Seconds(), nil
}

// bandwidthBytes and bandwidthReps are deviceBandwidth's copies: 20 of
// 1 GiB (about 10 ms on an H200), 2 of 1 MiB on the emulator.
var bandwidthBytes, bandwidthReps = int64(1 << 30), 20

func init() {
	if emulated {
		bandwidthBytes, bandwidthReps = 1<<20, 2
	}
}

// deviceBandwidth is the device's copy bandwidth in bytes/s
// (copyBandwidth), measured once per test binary.
var deviceBandwidth = sync.OnceValues(func() (float64, error) {
	d, err := openBackend(0, false)
	if err != nil {
		return 0, err
	}
	defer d.close()
	return copyBandwidth(d, bandwidthBytes, bandwidthReps)
})

// The device's device-to-device copy bandwidth, the yardstick of decode's
// achieved bandwidth ("bandwidth:" line).
func TestGPUCopyBandwidth(t *testing.T) {
	bw, err := deviceBandwidth()
	if err != nil {
		fmt.Printf("bandwidth: FAIL: %v\n", err)
	}
	require.NoError(t, err)
	fmt.Printf("bandwidth: device-to-device copy %.1f GB/s (bytes read + written per second; %d copies of %d MiB)\n",
		bw/1e9, bandwidthReps, bandwidthBytes>>20)
	assert.Greater(t, bw, 0.0)
}

// decodeWeightBytes is the weight bytes one decoded token reads from f:
// every tensor's data, except that an untied token_embd.weight is read
// for one row only (the token's embedding; the tied one is the output
// matrix as well).
func decodeWeightBytes(f *gguf.File) int64 {
	_, untied := f.Tensor("output.weight")
	var n int64
	for _, t := range f.Tensors {
		if t.Name == "token_embd.weight" && untied && len(t.Dims) == 2 && t.Dims[1] > 0 {
			n += t.Size / t.Dims[1]
			continue
		}
		n += t.Size
	}
	return n
}

func TestDecodeWeightBytes(t *testing.T) {
	path := platformFixtures(t)[0]
	f, err := gguf.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var all int64
	for _, ti := range f.Tensors {
		all += ti.Size
	}
	emb, ok := f.Tensor("token_embd.weight")
	require.True(t, ok)
	_, untied := f.Tensor("output.weight")
	require.True(t, untied, "the first platform fixture has an output matrix")
	assert.Equal(t, all-emb.Size+emb.Size/emb.Dims[1], decodeWeightBytes(f))
}

// speedRun is what TestGPUSpeed measures on one fixture; tok/s.
type speedRun struct {
	prefillTokens, decodeFrom, decodeTokens int
	prefill, decode                         float64
}

// measureSpeed prefills a prompt of prefillTokens (once to warm up, then
// timed), then from a fresh sequence prefills decodeFrom tokens and times
// decodeTokens decode steps after warm steps. The prompt tokens are the
// gate's probe sequence.
func measureSpeed(t *testing.T, s interface {
	forward.Sequence
	forward.Prefiller
}, vocab, prefillTokens, decodeFrom, decodeTokens, warm int) speedRun {
	t.Helper()
	r := speedRun{prefillTokens: prefillTokens, decodeFrom: decodeFrom, decodeTokens: decodeTokens}
	toks := probeSequence(vocab, max(prefillTokens, decodeFrom+warm+decodeTokens))
	for i := range 2 {
		s.Reset()
		t0 := time.Now()
		_, err := s.Prefill(toks[:prefillTokens], 0)
		require.NoError(t, err)
		if i == 1 || warm == 0 {
			r.prefill = float64(prefillTokens) / time.Since(t0).Seconds()
			break
		}
	}
	s.Reset()
	_, err := s.Prefill(toks[:decodeFrom], 0)
	require.NoError(t, err)
	p := decodeFrom
	for ; p < decodeFrom+warm; p++ {
		_, err := s.Step(toks[p], p)
		require.NoError(t, err)
	}
	t0 := time.Now()
	for range decodeTokens {
		_, err := s.Step(toks[p], p)
		require.NoError(t, err)
		p++
	}
	r.decode = float64(decodeTokens) / time.Since(t0).Seconds()
	return r
}

// Prefill at 512 tokens and decode (128 tokens from position 16) on every
// speed fixture, on the GPU, with decode's weight bandwidth as a share of
// the copy bandwidth; and a short CPU run next to it (prefill 64, decode
// 16) unless REALIZAR_GPU_SPEED_CPU=0. One "speed" line per fixture.
func TestGPUSpeed(t *testing.T) {
	bw, err := deviceBandwidth()
	require.NoError(t, err)
	for _, path := range speedFixtures(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			f, err := gguf.Open(path)
			require.NoError(t, err)
			weights := decodeWeightBytes(f)
			f.Close()
			m := loadPath(t, path)
			c := m.Config()
			g := newTestSequence(t, m, "speed", path)
			pre, from, n, warm := min(512, c.ContextLength/2), 16, 128, 8
			cpuPre, cpuN := 64, 16
			if emulated {
				pre, from, n, warm, cpuPre, cpuN = 2, 1, 1, 0, 2, 1
			}
			gpu := measureSpeed(t, g, c.Vocab, pre, from, n, warm)
			achieved := float64(weights) * gpu.decode
			// The same decode launched kernel by kernel, beside the graphs'.
			opts := testOptions()
			opts.NoGraphs = true
			direct, err := newGPUSequence(m, opts)
			failLine(t, err, "speed", path)
			noGraphs := measureSpeed(t, direct, c.Vocab, 2, from, n, warm)
			require.NoError(t, direct.Close())
			line := fmt.Sprintf("speed %s on %s: gpu prefill %d tok %.1f tok/s; gpu decode %d tok from position %d %.1f tok/s "+
				"(%s; %.1f tok/s launched kernel by kernel); "+
				"weights %.1f MB/token, achieved %.1f GB/s = %.1f%% of the copy bandwidth %.1f GB/s",
				filepath.Base(path), g.DeviceName(), gpu.prefillTokens, gpu.prefill, gpu.decodeTokens, gpu.decodeFrom, gpu.decode,
				g.graphStatus(), noGraphs.decode, float64(weights)/1e6, achieved/1e9, 100*achieved/bw, bw/1e9)
			if os.Getenv("REALIZAR_GPU_SPEED_CPU") != "0" {
				cpu := measureSpeed(t, m.NewSequence(), c.Vocab, cpuPre, from, cpuN, 0)
				line += fmt.Sprintf("; cpu prefill %d tok %.1f tok/s, decode %d tok %.1f tok/s", cpu.prefillTokens, cpu.prefill, cpu.decodeTokens, cpu.decode)
			}
			fmt.Println(line)
			for _, v := range []float64{gpu.prefill, gpu.decode} {
				assert.False(t, math.IsInf(v, 0) || math.IsNaN(v) || v <= 0, "tok/s %v", v)
			}
		})
	}
}
