package host_test

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/host"
)

func wasmFile(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name+".wasm"))
	require.NoError(t, err)
	return b
}

// generous are the limits of tests that do not test deadlines: the CI
// machine may be loaded, and a good guest must not time out there.
var generous = host.Limits{CallTimeout: 20 * time.Second, InitTimeout: 60 * time.Second}

// newHost starts a Host with cfg, and generous deadlines.
func newHost(t testing.TB, cfg host.Config) *host.Host {
	t.Helper()
	h, err := host.New(context.Background(), cfg.WithLimits(generous))
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.Close(context.Background()) })
	return h
}

func load(t testing.TB, h *host.Host, name string, opts host.LoadOptions) *host.Plugin {
	t.Helper()
	p, err := h.Load(context.Background(), wasmFile(t, name), opts)
	require.NoError(t, err)
	return p
}

// randomLogits returns n logits from the contract RNG, in [-10, 10).
func randomLogits(seed uint64, n int) []float32 {
	r := abi.NewRNG(seed)
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(20*r.Uniform() - 10)
	}
	return out
}

// argmax is the native reference: highest logit, lowest id on ties.
func argmax(logits []float32) int32 {
	best := 0
	for i, v := range logits {
		if v > logits[best] {
			best = i
		}
	}
	return int32(best)
}

var negInf = float32(math.Inf(-1))
