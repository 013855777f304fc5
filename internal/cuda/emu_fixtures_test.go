//go:build cudaemu && !cuda

package cuda

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/gguf"
	"github.com/realizar-host/realizar-host/internal/fixture"
	"github.com/realizar-host/realizar-host/internal/quantize"
)

// emuFixtures are models small enough for the emulator (a 256-token
// vocabulary): llama in F16 and Q4_K_M (Q4_K, Q6_K and others), qwen2
// (NEOX RoPE, Q/K/V biases) in F32 and Q8_0, a tied-output llama in
// Q4_0, and one of each other architecture the GPU forward computes:
// qwen3 (per-head Q/K norms, heads of 128 over n_embd 256) in F16, and a
// llama with YaRN RoPE scaling (factor 4 over an original context of 16:
// the ramp covers pairs 0-4 of 32) in F16, and a phi3 (fused QKV and
// gate-up, LongRoPE's long factors with attn_factor 1.19, 48 of 64 values
// rotated) in F32 and Q4_K_M, and a gemma3 (layers 0-4 sliding over a
// window of 4 positions with their own RoPE base, layer 5 global with
// linear scaling 8; GELU, post-norms, the scaled embedding, and a logit
// softcap of 30) in F32, and a qwen3moe (8 experts of width 256, 2
// routed per token) in F32.
// Generated once per test binary.
var emuFixtures = sync.OnceValues(func() ([]string, error) {
	dir, err := os.MkdirTemp("", "cuda-emu")
	if err != nil {
		return nil, err
	}
	tokens := make([]string, 256)
	for i := range tokens {
		tokens[i] = fmt.Sprintf("t%d", i)
	}
	vocabPath := filepath.Join(dir, "vocab.gguf")
	if err := gguf.WriteFile(vocabPath, []gguf.KV{{Key: gguf.KeyTokens, Value: tokens}}, nil); err != nil {
		return nil, err
	}
	vocab, err := gguf.Open(vocabPath)
	if err != nil {
		return nil, err
	}
	defer vocab.Close()
	base := fixture.Config{Arch: "llama", Embd: 256, FF: 512, Layers: 2, Heads: 4, HeadsKV: 2,
		Context: 64, RopeBase: 10000, RMSEps: 1e-5, Seed: 11, Type: gguf.TypeF16}
	qwen := base
	qwen.Name, qwen.Arch, qwen.QKVBias, qwen.Type, qwen.Seed = "emu-qwen2", "qwen2", true, gguf.TypeF32, 12
	tied := base
	tied.Name, tied.TiedOutput, tied.Seed = "emu-tied", true, 13
	qwen3 := base
	qwen3.Name, qwen3.Arch, qwen3.KeyLength, qwen3.RopeBase, qwen3.RMSEps, qwen3.Seed = "emu-qwen3", "qwen3", 128, 1e6, 1e-6, 14
	yarn := base
	yarn.Name, yarn.RopeScaling, yarn.RopeScaleFactor, yarn.RopeOrigContext, yarn.Seed = "emu-yarn", "yarn", 4, 16, 15
	phi3 := base
	phi3.Name, phi3.Arch, phi3.RopeDims, phi3.LongRoPE, phi3.RopeOrigContext, phi3.RopeAttnFactor, phi3.Type, phi3.Seed =
		"emu-phi3", "phi3", 48, true, 16, 1.19, gguf.TypeF32, 16
	gemma := base
	gemma.Name, gemma.Arch, gemma.Layers, gemma.HeadsKV, gemma.KeyLength, gemma.RopeBase, gemma.RMSEps = "emu-gemma3", "gemma3", 6, 1, 128, 1e6, 1e-6
	gemma.RopeScaling, gemma.RopeScaleFactor, gemma.SlidingWindow, gemma.LogitSoftcap, gemma.Type, gemma.Seed = "linear", 8, 4, 30, gguf.TypeF32, 17
	moe := qwen3
	moe.Name, moe.Arch, moe.Experts, moe.ExpertsUsed, moe.ExpertFF, moe.FF, moe.Type, moe.Seed = "emu-qwen3moe", "qwen3moe", 8, 2, 256, 768, gguf.TypeF32, 18
	base.Name = "emu-llama"
	var paths []string
	for _, c := range []fixture.Config{base, qwen, tied, qwen3, yarn, phi3, gemma, moe} {
		p := filepath.Join(dir, c.Name+".gguf")
		if err := fixture.GenerateFile(p, c, vocab); err != nil {
			return nil, err
		}
		paths = append(paths, p)
	}
	for _, q := range []struct {
		src int
		ft  quantize.FileType
		tag string
	}{{0, quantize.Q4_KM, "q4km"}, {1, quantize.Q8_0, "q8_0"}, {2, quantize.Q4_0, "q4_0"}, {5, quantize.Q4_KM, "q4km"}} {
		p := paths[q.src][:len(paths[q.src])-len(".gguf")] + "-" + q.tag + ".gguf"
		if _, err := quantize.File(p, paths[q.src], quantize.Options{FileType: q.ft}); err != nil {
			return nil, err
		}
		paths = append(paths, p)
	}
	return paths, nil
})

func platformFixtures(t *testing.T) []string {
	paths, err := emuFixtures()
	require.NoError(t, err)
	return paths
}
