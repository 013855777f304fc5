package plugins_test

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/abi/guest"
	"github.com/realizar-host/realizar-host/engine"
	"github.com/realizar-host/realizar-host/host"
	"github.com/realizar-host/realizar-host/internal/testenv"
)

// generous limits: the CI machine may be loaded; deadlines are not under test here.
var generous = host.Limits{CallTimeout: 20 * time.Second, InitTimeout: 60 * time.Second}

func newHost(t testing.TB, cfg host.Config) *host.Host {
	t.Helper()
	if dir := testenv.CompileCacheDir(t); dir != "" {
		cfg = cfg.WithCompilationCacheDir(dir) // shared by the run's test binaries
	}
	h, err := host.New(context.Background(), cfg.WithLimits(generous))
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.Close(context.Background()) })
	return h
}

// wasm reads plugins/wasm/<name>.wasm.
func wasm(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("wasm", name+".wasm"))
	require.NoError(t, err, "run plugins/build.sh")
	return b
}

func load(t testing.TB, h *host.Host, name, config string) *host.Plugin {
	t.Helper()
	p, err := h.Load(context.Background(), wasm(t, name), host.LoadOptions{Config: []byte(config)})
	require.NoError(t, err, name)
	return p
}

func newSampler(t testing.TB, v engine.Vocab, p *host.Plugin, processors ...*host.Plugin) *host.Sampler {
	t.Helper()
	s, err := host.NewSampler(v, p, processors...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// sample runs one step: Sample on a copy of logits (processors edit it),
// then Accept.
func sample(t testing.TB, s *host.Sampler, logits []float32) int32 {
	t.Helper()
	id, err := s.Sample(append([]float32(nil), logits...))
	require.NoError(t, err)
	s.Accept(id)
	return id
}

// randomLogits returns n logits from the contract RNG: a spread that gives
// a few likely tokens and a long tail, like a language model's.
func randomLogits(r *abi.RNG, n int) []float32 {
	out := make([]float32, n)
	for i := range out {
		u := r.Uniform()
		out[i] = float32(12*u*u*u - 4)
	}
	return out
}

func argmax(logits []float32) int32 {
	best := 0
	for i, v := range logits {
		if v > logits[best] {
			best = i
		}
	}
	return int32(best)
}

var (
	negInf = float32(math.Inf(-1))
	posInf = float32(math.Inf(1))
)

func up(x float32) float32   { return math.Nextafter32(x, posInf) }
func down(x float32) float32 { return math.Nextafter32(x, negInf) }

func guestLog(x float64) float64 { return guest.Log(x) }
