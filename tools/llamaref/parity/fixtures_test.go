package parity

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/gguf"
	"github.com/realizar-host/realizar-host/internal/arch"
	"github.com/realizar-host/realizar-host/internal/fixture"
	"github.com/realizar-host/realizar-host/tools/llamaref/internal/reftest"
	"github.com/realizar-host/realizar-host/tools/llamaref/ref"
)

// source is an unquantized model and the llama.cpp file types the file
// tests quantize it to.
type source struct {
	path   string
	ftypes []string
}

// allFileTypes are the llama.cpp file types of issue 2.
var allFileTypes = []string{"Q4_K_M", "Q4_K_S", "Q8_0", "Q4_0", "F16", "BF16"}

// fixturePresets are the generated models the file tests use, with their
// file types: tiny (width 256: Q4_K, Q5_K, Q6_K) in all of them; odd (width
// 288: Q5_0/Q8_0/Q5_1 fallbacks) and qwen2-tiny (biases, tied output) in
// the two K-quant mixes and Q8_0 only, to keep CI short; qwen3-tiny (per-head
// Q/K norms, Q wider than n_embd) in the types its forward is compared on;
// qwen3moe-tiny (8 experts, 2 used) in those and Q4_K_S and Q4_0 too, whose
// 8-expert rules differ (attn_output Q5_K in Q4_K_S, attn_k/attn_v Q8_0 in
// Q4_0); tiny-yarn (YaRN RoPE scaling) in Q8_0; phi3-tiny (fused attn_qkv
// and gate-up, LongRoPE, partial rotary) in the types its forward is
// compared on and Q4_K_S (attn_qkv takes attn_v's Q5_K there); gemma3-tiny
// (sliding-window and global layers, GELU, post-sublayer norms, tied) in
// the types its forward is compared on.
var fixturePresets = []struct {
	preset string
	ftypes []string
}{
	{"tiny", allFileTypes},
	{"odd", []string{"Q4_K_M", "Q4_K_S", "Q8_0"}},
	{"qwen2-tiny", []string{"Q4_K_M", "Q4_K_S", "Q8_0"}},
	{"qwen3-tiny", []string{"Q4_K_M", "Q8_0", "F16"}},
	{"qwen3moe-tiny", []string{"Q4_K_M", "Q8_0", "F16", "Q4_K_S", "Q4_0"}},
	{"tiny-yarn", []string{"Q8_0"}},
	{"phi3-tiny", []string{"Q4_K_M", "Q8_0", "F16", "Q4_K_S"}},
	{"gemma3-tiny", []string{"Q4_K_M", "Q8_0", "F16"}},
}

// registeredFileTypes are the file types an architecture's preset is
// quantized to and its forward compared on when the lists above do not
// name it (see init).
var registeredFileTypes = []string{"F32", "Q8_0", "Q4_K_M"}

// init brings every registered architecture none of whose presets
// fixturePresets lists under the file and forward comparisons, with its
// first preset in registeredFileTypes: a new architecture's registration
// is compared with llama.cpp without an edit here.
func init() {
	listed := map[string]bool{}
	for _, p := range fixturePresets {
		if c, ok := fixture.Preset(p.preset); ok {
			listed[c.Arch] = true
		}
	}
	for _, name := range arch.Names() {
		if listed[name] {
			continue
		}
		a, _ := arch.Lookup(name)
		preset := a.Presets[0].PresetName()
		fixturePresets = append(fixturePresets, struct {
			preset string
			ftypes []string
		}{preset, registeredFileTypes[1:]})
		for _, ft := range registeredFileTypes {
			forwardFiles = append(forwardFiles, struct{ source, ftype string }{"fixture-" + preset + "-F32.gguf", ft})
		}
	}
}

var (
	fixtureOnce    sync.Once
	fixtureDir     string
	fixtureSources []source
	fixtureErr     error
)

// sourceModels are the models the file tests quantize: the real trained
// stories260K, and the fixtures, generated once per test binary into a
// folder TestMain removes.
func sourceModels(t *testing.T, l *ref.Lib) []source {
	t.Helper()
	stories := reftest.SharedModel(t, "stories260K.gguf")
	vocabDir := filepath.Dir(reftest.Vocab(t, l, "qwen2"))
	fixtureOnce.Do(func() {
		fixtureDir, fixtureErr = os.MkdirTemp("", "llamaref-fixtures-")
		if fixtureErr != nil {
			return
		}
		for _, p := range fixturePresets {
			cfg, ok := fixture.Preset(p.preset)
			if !ok {
				fixtureErr = os.ErrNotExist
				return
			}
			// Qwen3 uses Qwen2's vocabulary, phi3 llama.cpp's phi-3 one,
			// llama and gemma3 the embedded llama SPM one.
			var vocab *gguf.File
			if name := fixture.VocabFile(cfg.Arch); name != "" {
				vocab, fixtureErr = gguf.Open(filepath.Join(vocabDir, name))
			} else {
				vocab, fixtureErr = fixture.LlamaVocab()
			}
			if fixtureErr != nil {
				return
			}
			path := filepath.Join(fixtureDir, "fixture-"+p.preset+"-F32.gguf")
			fixtureErr = fixture.GenerateFile(path, cfg, vocab)
			vocab.Close()
			if fixtureErr != nil {
				return
			}
			fixtureSources = append(fixtureSources, source{path, p.ftypes})
		}
	})
	require.NoError(t, fixtureErr)
	return append([]source{{stories, allFileTypes}}, fixtureSources...)
}
