//go:build cuda || cudaemu

package cuda

// Tests of the device forward. In a `cuda` build they run on the GPU (the
// build needs an NVIDIA driver to start, see the package doc);
// scripts/gpu-check.sh runs them from the GPU bundle with
// REALIZAR_GPU_FIXTURES naming extra GGUF files (the 1.1B fixture and
// quantized variants). In a `cudaemu` build the same forward runs its
// kernels on the host emulator (testdata/emu), with shorter probes.

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/forward"
	"github.com/realizar-host/realizar-host/gguf"
	"github.com/realizar-host/realizar-host/internal/quant"
	"github.com/realizar-host/realizar-host/model"
)

// gpuFixtures is the fixtures of the platform (platformFixtures: the tiny
// llama and qwen2 files on a GPU, smaller ones on the emulator) and the
// files listed in REALIZAR_GPU_FIXTURES (comma-separated).
func gpuFixtures(t *testing.T) []string {
	t.Helper()
	paths := platformFixtures(t)
	for _, p := range strings.Split(os.Getenv("REALIZAR_GPU_FIXTURES"), ",") {
		if p = strings.TrimSpace(p); p != "" {
			paths = append(paths, p)
		}
	}
	return paths
}

func loadPath(t *testing.T, path string) *model.Model {
	t.Helper()
	f, err := gguf.Open(path)
	require.NoError(t, err)
	m, err := model.Load(f, model.Options{})
	require.NoError(t, err, path)
	t.Cleanup(func() { m.Close(); f.Close() })
	return m
}

// testOptions are the device options of the tests: REALIZAR_CUDA_SYNC=1
// makes every launch wait for its kernel, so that a failing kernel is named
// (scripts/gpu-check.sh reruns a failure that way).
func testOptions() Options {
	return Options{SyncEachLaunch: os.Getenv("REALIZAR_CUDA_SYNC") == "1"}
}

// The device opens: the driver, the JIT of every kernel family and every
// kernel the forward launches. Its lines ("device: ...") head the log of
// scripts/gpu-check.sh.
func TestGPUDevice(t *testing.T) {
	d, err := openBackend(0, testOptions().SyncEachLaunch)
	if err != nil {
		fmt.Printf("device: open failed: %v\n", err)
	}
	require.NoError(t, err)
	defer d.close()
	for _, line := range d.describe() {
		fmt.Printf("device: %s\n", line)
	}
	if testOptions().SyncEachLaunch {
		fmt.Println("device: REALIZAR_CUDA_SYNC=1: every launch waits for its kernel")
	}
}

// Every weight type's product and embedding lookup against the CPU
// reference: the dequantized row times the activation in float64.
func TestGPUKernelTypes(t *testing.T) {
	d, err := openBackend(0, testOptions().SyncEachLaunch)
	require.NoError(t, err)
	defer d.close()
	const rows, cols = 37, 512
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([]float32, cols)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	for typ, suffix := range kernelTypes {
		t.Run(suffix, func(t *testing.T) {
			rb, err := typ.RowSize(cols)
			require.NoError(t, err)
			w := make([]byte, rows*rb)
			deq := make([]float32, rows*cols)
			for r := range rows {
				v := make([]float32, cols)
				for i := range v {
					v[i] = float32(rng.NormFloat64() * 0.1)
				}
				require.NoError(t, quant.Quantize(typ, w[r*rb:(r+1)*rb], v))
				require.NoError(t, quant.Dequantize(typ, deq[r*cols:(r+1)*cols], w[r*rb:(r+1)*rb]))
			}
			got := gemvOnDevice(t, d, typ, w, rb, rows, cols, x)
			// Against the CPU forward's own product (same activation
			// encoding, another summation order): close to float rounding.
			an, err := quant.ActivationSize(typ, cols)
			require.NoError(t, err)
			act := make([]byte, an)
			require.NoError(t, quant.QuantizeActivation(typ, act, x))
			dot, err := quant.DotFor(typ)
			require.NoError(t, err)
			var worst float64
			for r := range rows {
				cpu := float64(dot(w[r*rb:(r+1)*rb], act, cols))
				var mag float64
				for i := range cols {
					mag += math.Abs(float64(deq[r*cols+i]) * float64(x[i]))
				}
				worst = max(worst, math.Abs(cpu-float64(got[r]))/mag)
			}
			limit := 1e-6
			if typ.VecDotType() == quant.Q8_1 {
				// Q4_1 and Q5_1: the GPU sums the activation's quants where
				// the CPU's Q8_1 carries their f16-rounded scaled sum.
				limit = 1e-4
			}
			assert.Less(t, worst, limit, "GPU product against the CPU's, relative to the sum of |terms|")
			for r := range rows {
				var want, mag float64
				for i := range cols {
					want += float64(deq[r*cols+i]) * float64(x[i])
					mag += math.Abs(float64(deq[r*cols+i]) * float64(x[i]))
				}
				assert.InDelta(t, want, float64(got[r]), 0.01*mag+1e-4, "row %d", r)
			}
			emb := embedOnDevice(t, d, typ, w, rb, cols, 5)
			assert.InDeltaSlice(t, deq[5*cols:6*cols], emb, 1e-5, "embedding row 5")
			verdict := "ok"
			if t.Failed() {
				verdict = "FAIL"
			}
			fmt.Printf("kernel %s: gemv and embed %s; |gpu-cpu| <= %.1e of the sum of |terms|\n", suffix, verdict, worst)
		})
	}
}

// The activation encoders reproduce the CPU's encoding value for value:
// Q8_0 (f16 scale, quants) for the legacy types, Q8_K (f32 scale per 256,
// quants, sums of 16) for the K-quants; zero blocks, a negative extreme and
// a tie of magnitudes included.
func TestGPUActivationEncoding(t *testing.T) {
	d, err := openBackend(0, testOptions().SyncEachLaunch)
	require.NoError(t, err)
	defer d.close()
	const cols = 1024
	rng := rand.New(rand.NewPCG(3, 4))
	x := make([]float32, cols)
	for i := range x {
		x[i] = float32(rng.NormFloat64() * 3)
	}
	clear(x[256:512])            // an all-zero Q8_K block (and 8 zero Q8_0 chunks)
	x[600] = -40                 // a negative extreme
	x[770], x[775] = 25, -25     // equal magnitudes: the first one is the max
	x[31], x[33] = 1e-30, -1e-30 // tiny values
	for _, typ := range []quant.Type{quant.Q4_0, quant.Q4_K} {
		t.Run(typ.String(), func(t *testing.T) {
			enc, values := actEncoder(typ)
			xp := devUpload(t, d, f32Bytes(x))
			x8p := devUpload(t, d, make([]byte, cols))
			xdp := devUpload(t, d, make([]byte, cols/32*4))
			xsp := devUpload(t, d, make([]byte, cols/32*8))
			l := launcher{d: d}
			l.run(enc, cols/values, 1, 32, 1, ptr(xp), ptr(x8p), ptr(xdp), ptr(xsp), i64(cols))
			require.NoError(t, l.err)
			x8 := make([]int8, cols)
			xd := make([]float32, cols/32)
			xs := make([]int32, cols/32*2)
			require.NoError(t, d.dtoh(unsafe.Pointer(&x8[0]), x8p, cols))
			require.NoError(t, d.dtoh(unsafe.Pointer(&xd[0]), xdp, 4*cols/32))
			require.NoError(t, d.dtoh(unsafe.Pointer(&xs[0]), xsp, 8*cols/32))
			require.NoError(t, d.sync())

			n, err := quant.ActivationSize(typ, cols)
			require.NoError(t, err)
			want := make([]byte, n)
			require.NoError(t, quant.QuantizeActivation(typ, want, x))
			wantQ, wantD, wantS := make([]int8, cols), make([]float32, cols/32), make([]int32, cols/32*2)
			switch typ.VecDotType() {
			case quant.Q8_0:
				for c := range cols / 32 {
					b := want[34*c:]
					wantD[c] = quant.F16ToF32(uint16(b[0]) | uint16(b[1])<<8)
					for i := range 32 {
						wantQ[32*c+i] = int8(b[2+i])
						wantS[2*c+i/16] += int32(int8(b[2+i]))
					}
				}
			case quant.Q8_K:
				for blk := range cols / 256 {
					b := want[292*blk:]
					bd := math.Float32frombits(uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24)
					for i := range 256 {
						wantQ[256*blk+i] = int8(b[4+i])
					}
					for h := range 16 {
						wantS[16*blk+h] = int32(int16(uint16(b[260+2*h]) | uint16(b[261+2*h])<<8))
					}
					for k := range 8 {
						wantD[8*blk+k] = bd
					}
				}
			}
			assert.Equal(t, wantQ, x8, "quants")
			assert.Equal(t, wantD, xd, "scales")
			assert.Equal(t, wantS, xs, "sums of 16")
			verdict := "ok"
			if t.Failed() {
				verdict = "FAIL"
			}
			fmt.Printf("kernel %s (activations of %v): equal to the CPU's encoding %s\n", enc, typ, verdict)
		})
	}
}

func devUpload(t *testing.T, d backend, b []byte) dptr {
	p, err := d.alloc(int64(len(b)), "test")
	require.NoError(t, err)
	require.NoError(t, d.htod(p, unsafe.Pointer(&b[0]), int64(len(b))))
	require.NoError(t, d.sync())
	t.Cleanup(func() { d.free(&p) })
	return p
}

func f32Bytes(v []float32) []byte { return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 4*len(v)) }

func gemvOnDevice(t *testing.T, d backend, typ quant.Type, w []byte, rb, rows, cols int, x []float32) []float32 {
	wp := devUpload(t, d, w)
	xp := devUpload(t, d, f32Bytes(x))
	x8 := devUpload(t, d, make([]byte, cols))
	xd := devUpload(t, d, make([]byte, cols/32*4))
	xs := devUpload(t, d, make([]byte, cols/32*8))
	y := make([]float32, rows)
	yp := devUpload(t, d, f32Bytes(y))
	l := launcher{d: d}
	if enc, values := actEncoder(typ); enc == "" {
		l.run("gemv_"+kernelTypes[typ], ceilDiv(rows, 4), 1, 32, 4, ptr(wp), i64(rb), i64(rows), i64(cols), i64(1), ptr(xp), 0, ptr(yp))
	} else {
		l.run(enc, cols/values, 1, 32, 1, ptr(xp), ptr(x8), ptr(xd), ptr(xs), i64(cols))
		l.run("gemv_"+kernelTypes[typ], ceilDiv(rows, 4), 1, 32, 4, ptr(wp), i64(rb), i64(rows), i64(cols), i64(1), ptr(x8), ptr(xd), ptr(xs), 0, ptr(yp))
	}
	require.NoError(t, l.err)
	require.NoError(t, d.dtoh(unsafe.Pointer(&y[0]), yp, int64(4*rows)))
	require.NoError(t, d.sync())
	return y
}

func embedOnDevice(t *testing.T, d backend, typ quant.Type, w []byte, rb, cols int, token int32) []float32 {
	wp := devUpload(t, d, w)
	tok := []int32{token}
	tp := devUpload(t, d, unsafe.Slice((*byte)(unsafe.Pointer(&tok[0])), 4))
	out := make([]float32, cols)
	op := devUpload(t, d, f32Bytes(out))
	l := launcher{d: d}
	l.run("embed_"+kernelTypes[typ], ceilDiv(cols, 32), 1, 32, 1, ptr(wp), i64(rb), i64(cols), ptr(tp), ptr(op))
	require.NoError(t, l.err)
	require.NoError(t, d.dtoh(unsafe.Pointer(&out[0]), op, int64(4*cols)))
	require.NoError(t, d.sync())
	return out
}

// The parity gate passes on every fixture.
func TestGPUParityGate(t *testing.T) {
	for _, path := range gpuFixtures(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			m := loadPath(t, path)
			g := newTestSequence(t, m, "gate", path)
			v, err := runGate(g, m.NewSequence(), probeSequence(m.Config().Vocab, probeLen()))
			failLine(t, err, "gate", path)
			fmt.Printf("gate %s on %s: %s; 1-cosine %.2e\n", filepath.Base(path), g.DeviceName(), v, 1-v.MinCos)
			assert.True(t, v.OK, v.String())
			if emulated {
				// The gate forgives what a device's other float order
				// may bring; on the emulator's few positions a kernel
				// that misses a feature (a norm, YaRN's ramp) still
				// passes it at 1-cosine near 1e-2, while a faithful one
				// is within 1e-6.
				assert.Greater(t, v.MinCos, 1-emuMaxCosineGap, "1-cosine %.2e", 1-v.MinCos)
			}
		})
	}
}

// emuMaxCosineGap is the most 1-cosine TestGPUParityGate allows on the
// emulator, where kernels round as the CPU forward does.
const emuMaxCosineGap = 1e-4

// probeLen is the gate's probe length: probeTokens on a GPU, a few
// positions on the (slow) emulator.
func probeLen() int {
	if emulated {
		return 6
	}
	return probeTokens
}

// newTestSequence is newGPUSequence with testOptions, closed when t ends. A
// failure prints "<what> <fixture>: FAIL: <error>" for the summary of
// scripts/gpu-check.sh before it fails t.
func newTestSequence(t *testing.T, m *model.Model, what, path string) *gpuSequence {
	t.Helper()
	g, err := newGPUSequence(m, testOptions())
	failLine(t, err, what, path)
	t.Cleanup(func() { g.Close() })
	return g
}

// failLine prints "<what> <fixture>: FAIL: <err>" and stops t when err is
// not nil.
func failLine(t *testing.T, err error, what, path string) {
	t.Helper()
	if err != nil {
		fmt.Printf("%s %s: FAIL: %v\n", what, filepath.Base(path), err)
	}
	require.NoError(t, err)
}

// greedy decodes n tokens after prompt through the engine's adapter; the
// tokens and a copy of the logits each was picked from.
func greedy(seq forward.Sequence, ctx int, prompt []int32, n int) ([]int32, [][]float32, error) {
	f, err := forward.NewSequenceForward(seq, forward.Options{Arch: "test", ModelContext: ctx})
	if err != nil {
		return nil, nil, err
	}
	toks := append([]int32(nil), prompt...)
	var logits [][]float32
	start := 0
	for range n {
		l, err := f.Forward(toks, start)
		if err != nil {
			return nil, nil, fmt.Errorf("token %d: %w", len(toks)-len(prompt), err)
		}
		start = len(toks)
		toks = append(toks, int32(argmax(l)))
		logits = append(logits, append([]float32(nil), l...))
	}
	return toks[len(prompt):], logits, nil
}

// divergence describes the first token where two greedy runs differ, from
// the logits both picked it from (the same prefix): how close the CPU's
// choice was to the GPU's, in the CPU's logits, and the cosine of the two.
// A tiny gap means a near tie that the GPU's different rounding broke the
// other way; a large one, a wrong GPU result.
func divergence(i int, want, got []int32, cpu, gpu []float32) string {
	a, b := want[i], got[i]
	return fmt.Sprintf("first difference at token %d: cpu picks %d, gpu %d; cpu logits %.4f vs %.4f (gap %.4f), gpu logits %.4f vs %.4f; cosine %.5f",
		i, a, b, cpu[a], cpu[b], cpu[a]-cpu[b], gpu[a], gpu[b], cosine(gpu, cpu))
}

// 64 greedy tokens on the GPU equal the CPU's on every fixture.
func TestGPUGreedyEquality(t *testing.T) {
	for _, path := range gpuFixtures(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			m := loadPath(t, path)
			g := newTestSequence(t, m, "greedy", path)
			prompt := probeSequence(m.Config().Vocab, 8)
			ctx := m.Config().ContextLength
			n := 64
			if emulated {
				prompt, n = prompt[:4], 3
			}
			want, cpuLogits, err := greedy(m.NewSequence(), ctx, prompt, n)
			require.NoError(t, err, "cpu")
			got, gpuLogits, err := greedy(g, ctx, prompt, n)
			failLine(t, err, "greedy", path)
			same := 0
			for same < len(want) && want[same] == got[same] {
				same++
			}
			detail := ""
			if same < n {
				detail = "; " + divergence(same, want, got, cpuLogits[same], gpuLogits[same])
			}
			fmt.Printf("greedy %s: %d/%d tokens equal%s\n", filepath.Base(path), same, n, detail)
			assert.Equal(t, want, got)
		})
	}
}

// The KV cache grows while positions are held (the held keys and values
// copied on the device, twice here): the logits stay the CPU's.
func TestGPUCacheGrowth(t *testing.T) {
	path := platformFixtures(t)[0]
	m := loadPath(t, path)
	g := newTestSequence(t, m, "growth", path)
	done := g.d.enter()
	require.NoError(t, g.grow(4)) // a small cache, so that stepping must grow it
	done()
	cpu := m.NewSequence()
	toks := probeSequence(m.Config().Vocab, 12)
	worst := 1.0
	for p, tok := range toks {
		want, err := cpu.Step(tok, p)
		require.NoError(t, err)
		got, err := g.Step(tok, p)
		failLine(t, err, "growth", path)
		worst = min(worst, cosine(got, want))
		assert.Equal(t, argmax(want), argmax(got), "position %d", p)
	}
	fmt.Printf("growth %s: capacity 4 -> %d while stepping, min cosine %.7f\n", filepath.Base(path), g.capacity, worst)
	assert.GreaterOrEqual(t, g.capacity, len(toks))
	assert.Greater(t, worst, 0.9999)
}

// NewSequence: the gated step starts on the GPU and reports so through the
// engine's adapter; the verdict is cached. (On the emulator too: the same
// gate, 64 positions.)
func TestGPUNewSequence(t *testing.T) {
	path := platformFixtures(t)[0]
	m := loadPath(t, path)
	sum, err := FileSHA256(path)
	require.NoError(t, err)
	cache, err := OpenVerdictCache(filepath.Join(t.TempDir(), "v.json"))
	require.NoError(t, err)
	opts := testOptions()
	opts.FileSHA256, opts.Verdicts = sum, cache
	s, err := NewSequence(m, opts)
	failLine(t, err, "newstep", path)
	defer s.Close()
	fmt.Printf("newstep %s on %s: on GPU %v, verdict %s%s\n", filepath.Base(path), s.Device(), s.OnGPU(), s.Verdict(), logSuffixReason(s.fallbackReason()))
	assert.True(t, s.OnGPU(), s.fallbackReason())
	_, ok := cache.get(verdictKey{fileSHA256: sum, device: s.Device(), kernelHash: kernelHash()})
	assert.True(t, ok)
	f, err := forward.NewSequenceForward(s, forward.Options{Arch: "llama", ModelContext: m.Config().ContextLength})
	require.NoError(t, err)
	assert.True(t, f.OnGPU())
	assert.Equal(t, []string{"Backend: cuda"}, f.Notices())
	// The whole context (512 positions for the tiny fixture; more would be
	// ErrContextExceeded): the device cache grows past its first 256.
	dropped, err := f.Reserve(m.Config().ContextLength)
	require.NoError(t, err)
	assert.False(t, dropped, "nothing held yet")
}

func logSuffixReason(reason string) string {
	if reason == "" {
		return ""
	}
	return "; fell back: " + reason
}
