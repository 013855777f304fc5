package cuda

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/forward"
	"github.com/realizar-host/realizar-host/gguf"
	"github.com/realizar-host/realizar-host/internal/fixture"
	"github.com/realizar-host/realizar-host/model"
)

// tinyPath is the tiny llama fixture, generated once per test binary.
var tinyPath = sync.OnceValues(func() (string, error) {
	vocab, err := fixture.LlamaVocab()
	if err != nil {
		return "", err
	}
	defer vocab.Close()
	dir, err := os.MkdirTemp("", "cuda-test")
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "tiny.gguf")
	return path, fixture.GenerateFile(path, fixture.Tiny(), vocab)
})

func TestMain(m *testing.M) {
	code := m.Run()
	if p, err := tinyPath(); err == nil && p != "" {
		os.RemoveAll(filepath.Dir(p))
	}
	os.Exit(code)
}

// loadTiny loads the tiny llama fixture.
func loadTiny(t *testing.T) *model.Model {
	t.Helper()
	path, err := tinyPath()
	require.NoError(t, err)
	f, err := gguf.Open(path)
	require.NoError(t, err)
	m, err := model.Load(f, model.Options{Threads: 1})
	require.NoError(t, err)
	t.Cleanup(func() { m.Close(); f.Close() })
	return m
}

// errDevice stands for a kernel or memory error after start.
var errDevice = errors.New("device: illegal address")

// stand-in GPU: the real CPU forward of the same model, with failures
// injected after a number of calls and logits optionally bent away from
// the CPU's (a broken kernel).
type standIn struct {
	cpu       *model.Sequence
	calls     int // Step and Prefill calls so far
	failAt    int // the call that fails (1-based); 0 never
	failReset bool
	noise     float32
	closed    bool
	out       []float32
}

func (g *standIn) Reset()             { g.cpu.Reset() }
func (g *standIn) DeviceName() string { return "stand-in" }
func (g *standIn) Close() error       { g.closed = true; return nil }

func (g *standIn) bend(l []float32, err error) ([]float32, error) {
	if err != nil || g.noise == 0 {
		return l, err
	}
	g.out = append(g.out[:0], l...)
	for i := range g.out {
		g.out[i] += g.noise * float32((i*7919)%13-6)
	}
	return g.out, nil
}

func (g *standIn) Step(tok int32, pos int) ([]float32, error) {
	if g.calls++; g.calls == g.failAt {
		return nil, errDevice
	}
	return g.bend(g.cpu.Step(tok, pos))
}

func (g *standIn) Prefill(toks []int32, start int) ([]float32, error) {
	if g.calls++; g.calls == g.failAt {
		return nil, errDevice
	}
	return g.bend(g.cpu.Prefill(toks, start))
}

func (g *standIn) Reserve(n int) (bool, error) {
	if g.failReset {
		return false, errDevice
	}
	return g.cpu.Reserve(n)
}

func gated(t *testing.T, m *model.Model, g *standIn, cache *VerdictCache) (*Sequence, *bytes.Buffer) {
	t.Helper()
	var stderr bytes.Buffer
	key := verdictKey{fileSHA256: "f", device: g.DeviceName(), kernelHash: kernelHash()}
	return newGatedSequence(m, g, Options{Stderr: &stderr, Verdicts: cache}, key), &stderr
}

func TestGatePasses(t *testing.T) {
	m := loadTiny(t)
	g := &standIn{cpu: m.NewSequence()}
	s, stderr := gated(t, m, g, nil)
	assert.True(t, s.OnGPU())
	assert.True(t, s.Verdict().OK, s.Verdict().String())
	assert.Equal(t, probeTokens, s.Verdict().Positions)
	assert.Empty(t, stderr.String())
	name, gpu := s.Backend()
	assert.Equal(t, "cuda", name)
	assert.True(t, gpu)

	// The same SequenceForward adapter drives it, and it agrees with the CPU.
	f, err := forward.NewSequenceForward(s, forward.Options{Arch: "llama", ModelContext: m.Config().ContextLength})
	require.NoError(t, err)
	assert.Equal(t, []string{"Backend: cuda"}, f.Notices())
	toks := []int32{1, 450, 4996, 17354, 1701}
	got, err := f.Forward(toks, 0)
	require.NoError(t, err)
	want, err := m.NewSequence().Prefill(toks, 0)
	require.NoError(t, err)
	assert.Equal(t, want, got)
	assert.True(t, f.OnGPU())
}

func TestGateRejectsFallsBackLoudly(t *testing.T) {
	m := loadTiny(t)
	g := &standIn{cpu: m.NewSequence(), noise: 50}
	s, stderr := gated(t, m, g, nil)
	assert.False(t, s.OnGPU())
	assert.True(t, g.closed, "the device is released")
	assert.False(t, s.Verdict().OK)
	assert.Contains(t, stderr.String(), "realizar-host: Fallback: cuda → cpu: cuda: GPU parity gate rejected the device on stand-in: position 0: cosine")

	f, err := forward.NewSequenceForward(s, forward.Options{Arch: "llama", ModelContext: m.Config().ContextLength})
	require.NoError(t, err)
	s.OnFallback(f.AddNotice) // delivers the notice made at load
	n := f.Notices()
	require.Len(t, n, 2)
	assert.True(t, strings.HasPrefix(n[0], "Backend: cpu-"), n[0])
	assert.True(t, strings.HasSuffix(n[0], "(cuda fallback)"), n[0])
	assert.True(t, strings.HasPrefix(n[1], "Fallback: cuda → cpu: "), n[1])
	assert.False(t, f.OnGPU())

	toks := []int32{1, 450, 4996}
	got, err := f.Forward(toks, 0)
	require.NoError(t, err)
	want, _ := m.NewSequence().Prefill(toks, 0)
	assert.Equal(t, want, got, "logits come from the CPU")
}

// A device error mid-decode: the held span and the token are replayed on
// the CPU, and the answer is the CPU's, never the GPU's unfinished state.
func TestStepErrorReplaysOnCPU(t *testing.T) {
	m := loadTiny(t)
	g := &standIn{cpu: m.NewSequence()}
	s, stderr := gated(t, m, g, nil)
	require.True(t, s.OnGPU())
	var notices []string
	s.OnFallback(func(l string) { notices = append(notices, l) })

	toks := []int32{1, 450, 4996, 17354, 1701, 263}
	g.failAt = g.calls + 4 // the 4th call after the gate: Step at position 3
	_, err := s.Prefill(toks[:3], 0)
	require.NoError(t, err)
	var got []float32
	for p := 3; p < len(toks); p++ {
		got, err = s.Step(toks[p], p)
		require.NoError(t, err, "position %d", p)
	}
	assert.False(t, s.OnGPU())
	require.Len(t, notices, 1)
	assert.Equal(t, "Fallback: cuda → cpu: device: illegal address", notices[0])
	assert.Contains(t, stderr.String(), notices[0])
	want, _ := m.NewSequence().Prefill(toks, 0)
	assert.Equal(t, want, got)
	name, gpu := s.Backend()
	assert.False(t, gpu)
	assert.Contains(t, name, "cuda fallback")
}

func TestPrefillErrorReplaysOnCPU(t *testing.T) {
	m := loadTiny(t)
	g := &standIn{cpu: m.NewSequence()}
	s, _ := gated(t, m, g, nil)
	toks := []int32{1, 450, 4996, 17354, 1701, 263}
	_, err := s.Prefill(toks[:2], 0)
	require.NoError(t, err)
	g.failAt = g.calls + 1
	got, err := s.Prefill(toks, 2)
	require.NoError(t, err)
	assert.False(t, s.OnGPU())
	want, _ := m.NewSequence().Prefill(toks, 0)
	assert.Equal(t, want, got)
	// It keeps going on the CPU from there: a decode step after the
	// prompt, as a CPU step given the same calls (a one-token pass sums
	// in the one-token order, a prompt's rows in the batch orders, so
	// the reference takes the same spans).
	got, err = s.Step(5, len(toks))
	require.NoError(t, err)
	ref := m.NewSequence()
	_, err = ref.Prefill(toks, 0)
	require.NoError(t, err)
	want, _ = ref.Step(5, len(toks))
	assert.Equal(t, want, got)
}

func TestReserveErrorDropsAndFallsBack(t *testing.T) {
	m := loadTiny(t)
	g := &standIn{cpu: m.NewSequence()}
	s, stderr := gated(t, m, g, nil)
	_, err := s.Prefill([]int32{1, 2, 3}, 0)
	require.NoError(t, err)
	g.failReset = true
	dropped, err := s.Reserve(100)
	require.NoError(t, err)
	assert.True(t, dropped, "the caller must replay from 0")
	assert.False(t, s.OnGPU())
	assert.Contains(t, stderr.String(), "illegal address")
	_, err = s.Step(1, 1)
	assert.ErrorIs(t, err, model.ErrPosition, "nothing is held after the drop")
}

// The caller's mistakes are errors, not reasons to leave the GPU.
func TestCallerErrorsStayOnGPU(t *testing.T) {
	m := loadTiny(t)
	s, stderr := gated(t, m, &standIn{cpu: m.NewSequence()}, nil)
	_, err := s.Step(int32(m.Config().Vocab), 0)
	assert.ErrorIs(t, err, forward.ErrBadToken)
	_, err = s.Step(1, 5)
	assert.ErrorIs(t, err, model.ErrPosition)
	_, err = s.Reserve(m.Config().ContextLength + 1)
	assert.ErrorIs(t, err, forward.ErrContextExceeded)
	_, err = s.Prefill([]int32{1, 2}, 2)
	assert.ErrorIs(t, err, model.ErrPosition)
	assert.True(t, s.OnGPU())
	assert.Empty(t, stderr.String())
}

// A cached verdict skips the probe; a cached rejection falls back without
// touching the device's forward.
func TestGateVerdictCached(t *testing.T) {
	m := loadTiny(t)
	cache, err := OpenVerdictCache(filepath.Join(t.TempDir(), "v.json"))
	require.NoError(t, err)
	g := &standIn{cpu: m.NewSequence()}
	s, _ := gated(t, m, g, cache)
	require.True(t, s.OnGPU())
	probeCalls := g.calls
	assert.Greater(t, probeCalls, probeTokens)

	g2 := &standIn{cpu: m.NewSequence()}
	s2, _ := gated(t, m, g2, cache)
	assert.True(t, s2.OnGPU())
	assert.Zero(t, g2.calls, "no probe with a cached pass")

	k := verdictKey{fileSHA256: "f", device: "stand-in", kernelHash: kernelHash()}
	require.NoError(t, cache.put(k, Verdict{Reason: "position 9: cosine 0.10000 < 0.95", Positions: 64}))
	g3 := &standIn{cpu: m.NewSequence()}
	s3, stderr := gated(t, m, g3, cache)
	assert.False(t, s3.OnGPU())
	assert.Zero(t, g3.calls)
	assert.Contains(t, stderr.String(), "position 9")
}

// The device failing during the probe falls back, and nothing is cached.
func TestGateDeviceErrorNotCached(t *testing.T) {
	m := loadTiny(t)
	cache, err := OpenVerdictCache("")
	require.NoError(t, err)
	s, stderr := gated(t, m, &standIn{cpu: m.NewSequence(), failAt: 10}, cache)
	assert.False(t, s.OnGPU())
	assert.Contains(t, stderr.String(), "gate on gpu: probe position 9: device: illegal address")
	assert.Empty(t, cache.m)
}

// Batch over gated steps: rows of steps on the device and on the CPU
// each get their sequence's logits alone; a device error in one row falls
// that sequence back (loudly) and replays it on the CPU, the other rows
// unaffected; a foreign row fails alone. NewSequence of a device forward
// that has one sequence is a CPU step, loudly.
func TestGatedBatch(t *testing.T) {
	m := loadTiny(t)
	ga, gb := &standIn{cpu: m.NewSequence()}, &standIn{cpu: m.NewSequence()}
	a, _ := gated(t, m, ga, nil)
	b, stderrB := gated(t, m, gb, nil)
	require.True(t, a.OnGPU())
	require.True(t, b.OnGPU())
	c := a.NewSequence()
	assert.False(t, c.OnGPU())
	assert.Contains(t, c.fallbackReason(), "has one sequence")

	probe := probeSequence(m.Config().Vocab, 16)
	prompts := [][]int32{probe[:5:5], probe[5:8:8], probe[8:14:14]}
	alone := func(p []int32) []float32 {
		st := m.NewSequence()
		out, err := st.Prefill(p, 0)
		require.NoError(t, err)
		return append([]float32(nil), out...)
	}
	rows := []forward.Rows{
		{Sequence: a, Tokens: prompts[0], Logits: true},
		{Sequence: b, Tokens: prompts[1], Logits: true},
		{Sequence: c, Tokens: prompts[2], Logits: true},
		{Sequence: m.NewSequence(), Tokens: prompts[0], Logits: true},
	}
	require.NoError(t, a.Batch(rows))
	for i, p := range prompts {
		require.NoError(t, rows[i].Err, "row %d", i)
		assert.Equal(t, alone(p), rows[i].Out, "row %d", i)
	}
	assert.ErrorIs(t, rows[3].Err, model.ErrForeignSequence)

	// b's device fails on its next call: b falls back and replays; a stays.
	gb.failAt = gb.calls + 1
	next := []int32{probe[14], probe[15], probe[1]}
	rows = rows[:3]
	for i := range rows {
		rows[i] = forward.Rows{Sequence: rows[i].Sequence, Start: len(prompts[i]), Tokens: next[i : i+1], Logits: true}
		prompts[i] = append(prompts[i], next[i])
	}
	require.NoError(t, c.Batch(rows))
	for i, p := range prompts {
		require.NoError(t, rows[i].Err, "row %d", i)
		// Alone with the same spans: the prompt, then one decode step;
		// b's fallback replays its tokens as one prompt.
		want := alone(p)
		if i != 1 {
			st := m.NewSequence()
			_, err := st.Prefill(p[:len(p)-1], 0)
			require.NoError(t, err)
			want, err = st.Step(p[len(p)-1], len(p)-1)
			require.NoError(t, err)
		}
		assert.Equal(t, want, rows[i].Out, "row %d", i)
	}
	assert.True(t, a.OnGPU())
	assert.False(t, b.OnGPU())
	assert.Contains(t, stderrB.String(), "Fallback: cuda → cpu")
	assert.True(t, gb.closed)
}
