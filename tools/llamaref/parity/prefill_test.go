package parity

import (
	"math"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/internal/quant"
	"github.com/realizar-host/realizar-host/tools/llamaref/internal/reftest"
	"github.com/realizar-host/realizar-host/tools/llamaref/ref"
)

// envPrefillAll widens TestPrefillLogits to every forward target and more
// prompt lengths (set to anything).
const envPrefillAll = "REALIZAR_PARITY_PREFILL_ALL"

// prefillTargets are the targets TestPrefillLogits compares in CI: F16 and
// F32 files, whose weight products llama.cpp runs through llamafile's
// tinyBLAS in a batch (docs/ggml-order.md), across the architectures
// (phi3's fused tensors, qwen3's dense FFN, qwen3moe's F32 router beside
// experts that keep the one-token order, gemma3's sliding layers),
// stories260K's F32 (n_ff 172: ffn_down declines llamafile, SwiGLU has a
// scalar tail per row) and a Q8_0 file, where only attention's F16
// products change order (visible from 33 tokens on).
var prefillTargets = []string{
	"stories260K-F32", "fixture-phi3-tiny-F16", "fixture-phi3-tiny-F32",
	"fixture-qwen3-tiny-F16", "fixture-qwen3-tiny-Q8_0", "fixture-qwen3moe-tiny-F16", "fixture-gemma3-tiny-F16",
}

// prefillGap says why a target's batched prompt logits may differ from
// llama.cpp's here (ok false: they must not): knownOrderGap's reasons, and
// Q4_K matrices in ggml's CPU_REPACK buffer, whose batches of four or more
// tokens llama.cpp multiplies with ggml_gemm_q4_K_8x8_q8_K — measured to
// differ from quant at a few prompt lengths from 4 on, not yet pinned down.
func prefillGap(name string) (string, bool) {
	if gap, ok := knownOrderGap(name); ok {
		return gap, true
	}
	if strings.Contains(name, "-Q4_K_") && quant.RepackOrder() && !quant.AMXOrder() {
		return "CPU_REPACK's Q4_K GEMM in llama.cpp's batches of 4+ tokens", true
	}
	return "", false
}

// TestPrefillLogits: the logits after a prompt prefilled in one batch
// (llama.cpp's n_batch = n_ctx; ours one Prefill pass) equal llama.cpp's bit
// for bit at prompt lengths 2 to 33, where llama.cpp multiplies the F16 and
// F32 weights and attention's F16 products in llamafile's order (one token
// is the one-token order, which TestTeacherForcedLogits covers). Targets
// with a known order gap are logged, not failed. With
// REALIZAR_PARITY_PREFILL_ALL set: every forward target, lengths 2 to 40.
func TestPrefillLogits(t *testing.T) {
	l := reftest.Lib(t)
	all := os.Getenv(envPrefillAll) != ""
	lengths := []int{2, 3, 4, 5, 8, 17, 33}
	if all {
		lengths = nil
		for n := 2; n <= 40; n++ {
			lengths = append(lengths, n)
		}
	}
	for _, tg := range targets(t, l) {
		if !all && !contains(prefillTargets, tg.name) {
			continue
		}
		t.Run(tg.name, func(t *testing.T) {
			rm := reftest.Model(t, l, tg.path)
			toks := storyTokens(t, rm)
			rc := reftest.Context(t, rm, ref.ContextConfig{NCtx: refContext})
			m := loadOurs(t, tg.path, 2)
			worst, bad := 0.0, 0
			for _, n := range lengths {
				want, err := rc.PromptLogits(toks[:n])
				require.NoError(t, err)
				got, err := m.NewSequence().Prefill(toks[:n], 0)
				require.NoError(t, err)
				_, maxAbs, maxRef := compare(got, want)
				rel := maxAbs / math.Max(1, maxRef)
				worst = math.Max(worst, rel)
				if maxAbs != 0 {
					bad++
					t.Logf("prompt of %d tokens: max |Δ|/max(1,|ref|) %.3g", n, rel)
				}
			}
			t.Logf("%d of %d prompt lengths bit-identical; worst max |Δ|/max(1,|ref|) %.3g", len(lengths)-bad, len(lengths), worst)
			if gap, known := prefillGap(tg.name); known {
				if bad > 0 {
					t.Logf("KNOWN GAP (%s)", gap)
				}
				return
			}
			assert.Zero(t, bad, "prompt lengths whose batched logits differ from llama.cpp's")
		})
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}
