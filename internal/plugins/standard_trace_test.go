package plugins_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/abi/wasmfile"
	"github.com/realizar-host/realizar-host/engine/enginetest"
	"github.com/realizar-host/realizar-host/host"
	"github.com/realizar-host/realizar-host/internal/plugins/sampler/standard"
	"github.com/realizar-host/realizar-host/internal/testenv"
)

// buildTraced compiles standard.c (which includes whole_vocab.c) with the
// flags plugins/build.sh gives it, plus
// -DSTANDARD_TRACE: the module then logs whole_vocab's sums and cuts.
func buildTraced(t *testing.T) []byte {
	t.Helper()
	clang := testenv.Tool(t, "clang-14", "building the traced standard sampler needs clang-14 (apt install clang-14 lld-14)")
	out := filepath.Join(t.TempDir(), "standard.wasm")
	cmd := exec.Command(clang, "--target=wasm32", "-mbulk-memory", "-msimd128", "-Os", "-std=c11", "-nostdlib",
		"-ffp-contract=off", "-fno-fast-math", "-g0", "-Wall", "-Wextra", "-Werror", "-I"+filepath.Join(testenv.Root(), "abi", "guest", "c"),
		"-Wl,--no-entry", "-Wl,--strip-all", "-Wl,-z,stack-size=65536", "-DSTANDARD_TRACE",
		"-o", out, "sampler/standard/c/standard.c", filepath.Join(testenv.Root(), "abi", "guest", "c", "realizar.c"))
	msg, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", msg)
	raw, err := os.ReadFile(out)
	require.NoError(t, err)
	meta, err := wasmfile.MarshalMeta(wasmfile.Meta{ABI: abi.Version, Kind: "sampler", Name: "standard-trace",
		Version: "test", Description: "standard with whole_vocab traces"})
	require.NoError(t, err)
	mod, err := wasmfile.SetCustomSection(raw, abi.MetaSection, meta)
	require.NoError(t, err)
	return mod
}

// wholeTrace is the line whole_vocab logs for logits under cfg, computed
// the slow way, as chain.go does: the whole vocabulary sorted, the softmax
// sum for top-p (0 when top_p is 1) and its cut, the min-p cut, the final
// softmax sum at the temperature. cfg has no bias or penalties.
func wholeTrace(cfg standard.Config, logits []float32) string {
	n := len(logits)
	ids, vals := make([]int32, n), append([]float32(nil), logits...)
	for i := range ids {
		ids[i] = int32(i)
	}
	abi.SortCandidates(ids, vals)
	probs := make([]float64, n)
	sum, n1 := 0.0, n
	if cfg.TopP < 1 {
		sum = abi.Softmax(probs, vals, 1)
		cum := 0.0
		for i, p := range probs {
			cum = cum + p/sum
			if cum >= cfg.TopP {
				n1 = i + 1
				break
			}
		}
	}
	n2 := n1
	if cfg.MinP > 0 {
		abi.Softmax(probs[:n1], vals[:n1], 1)
		thr := float64(cfg.MinP * probs[0])
		for i := 1; i < n1; i++ {
			if probs[i] < thr {
				n2 = i
				break
			}
		}
	}
	sumT := abi.Softmax(probs[:n2], vals[:n2], cfg.Temperature)
	return fmt.Sprintf("whole %x %x %x %x", math.Float64bits(sum), n1, n2, math.Float64bits(sumT))
}

// TestWholeVocabularyTrace: the C build's bucketed walk (whole_vocab)
// reproduces, bit for bit, the sums and cut points of the full sort, not
// only the chosen token (an error of one ulp in a sum would change a token
// only rarely). Shapes with a NaN or +Inf logit, or only -Inf ones, must
// fall back to the full sort; every other shape, -Inf (masked) ids
// included, must not.
func TestWholeVocabularyTrace(t *testing.T) {
	mod := buildTraced(t)
	h := newHost(t, host.NewConfig())
	for _, n := range []int{1, 9, 3000, 40000} {
		v := enginetest.NewTokenVocab(n, nil)
		for k, cfgJSON := range wholeConfigs {
			if strings.Contains(cfgJSON, "logit_bias") || (n == 40000 && k > 3) {
				continue
			}
			cfg, err := standard.ParseConfig([]byte(cfgJSON))
			require.NoError(t, err)
			for _, lg := range wholeLogits {
				t.Run(fmt.Sprintf("n=%d/%d/%s", n, k, lg.name), func(t *testing.T) {
					p, err := h.Load(context.Background(), mod, host.LoadOptions{Config: []byte(cfgJSON)})
					require.NoError(t, err)
					s := newSampler(t, v, p)
					require.NoError(t, s.Reset(uint64(k), nil))
					r := abi.NewRNG(uint64(n + k))
					steps := 12
					if n == 40000 {
						steps = 3
					}
					fallbacks := 0
					for step := range steps {
						logits := lg.gen(&r, n)
						sample(t, s, logits)
						lines := strings.Split(strings.TrimSpace(string(s.Log()[0])), "\n")
						last := lines[len(lines)-1]
						last = last[strings.Index(last, "] ")+2:]
						if strings.HasSuffix(last, "fallback") {
							fallbacks++
							continue
						}
						require.Equal(t, wholeTrace(cfg, logits), last, "step %d", step)
					}
					if lg.name == "nan" || lg.name == "inf" || lg.name == "all-masked" {
						assert.Equal(t, steps, fallbacks, "a NaN or +Inf logit, or all -Inf, takes the full sort")
					} else {
						assert.Zero(t, fallbacks, "the bucketed walk gave up")
					}
				})
			}
		}
	}
}
