package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/gguf"
	"github.com/realizar-host/realizar-host/internal/fixture"
	"github.com/realizar-host/realizar-host/internal/testenv"
)

// moeModel writes a one-layer qwen3moe-tiny (n_embd 64) with the embedded
// llama vocabulary, which keeps the file at about 9 MB.
func moeModel(t *testing.T) string {
	t.Helper()
	vocab, err := fixture.LlamaVocab()
	require.NoError(t, err)
	defer vocab.Close()
	c := fixture.Qwen3MoETiny()
	c.Embd, c.Layers, c.Context = 64, 1, 128
	path := filepath.Join(t.TempDir(), "qwen3moe.gguf")
	require.NoError(t, fixture.GenerateFile(path, c, vocab))
	return path
}

// inspect names the architecture and shows its expert counts.
func TestInspectMoE(t *testing.T) {
	path := moeModel(t)
	rep, err := inspect(path)
	require.NoError(t, err)
	assert.Equal(t, "qwen3moe", rep.Architecture)
	hp := rep.Hyperparameters
	for name, got := range map[string]*uint32{"expert_count": hp.ExpertCount, "expert_used_count": hp.ExpertUsedCount, "expert_feed_forward_length": hp.ExpertFFNLength} {
		require.NotNil(t, got, name)
	}
	assert.Equal(t, []uint32{8, 2, 256}, []uint32{*hp.ExpertCount, *hp.ExpertUsedCount, *hp.ExpertFFNLength})

	var text strings.Builder
	require.NoError(t, rep.writeText(&text))
	for _, want := range []string{"qwen3moe", "expert_count:", "expert_used_count:", "expert_feed_forward_length:"} {
		assert.Contains(t, text.String(), want)
	}

	// A dense file has no expert rows.
	dense, err := inspect(storiesModel(t))
	require.NoError(t, err)
	text.Reset()
	require.NoError(t, dense.writeText(&text))
	assert.NotContains(t, text.String(), "expert_count")
}

// run works on a qwen3moe file end to end (the embedded greedy sampler and
// stop policy), and bad expert metadata is exit 3 naming the key.
func TestRunMoE(t *testing.T) {
	path := moeModel(t)
	stdout, stderr, code := runIn(t, "", "run", "-m", path, "-p", "Once upon a time", "-n", "8", "--sampler", "greedy")
	require.Equal(t, 0, code, stderr)
	assert.NotEmpty(t, stdout)

	withKey := func(key string, v uint32) string {
		return rewriteStories(t, path, func(kv []gguf.KV, _ []gguf.Tensor) {
			for i := range kv {
				if kv[i].Key == key {
					kv[i].Value = v
				}
			}
		})
	}
	for _, tc := range []struct {
		name, key string
		value     uint32
		msg       string
	}{
		{"no experts", "qwen3moe.expert_count", 0, "qwen3moe.expert_count = 0 out of range"},
		{"more used than there are", "qwen3moe.expert_used_count", 9, "qwen3moe.expert_used_count = 9 exceeds qwen3moe.expert_count = 8"},
		{"none used", "qwen3moe.expert_used_count", 0, "qwen3moe.expert_used_count = 0 out of range"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := runIn(t, "", "run", "-m", withKey(tc.key, tc.value), "-p", "Once", "-n", "2")
			assert.Equal(t, exitBadFile, code, stderr)
			assert.Contains(t, stderr, tc.msg)
			assert.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
			assert.Empty(t, stdout)
		})
	}
}

// run --draft-model on qwen3moe-tiny, the model as its own draft model
// (its experts routed in the draft's catch-up passes and steps as in the
// target's verify passes): the plain greedy tokens and text, nearly every
// draft accepted.
func TestRunMoEDraftModel(t *testing.T) {
	path := moeModel(t)
	args := []string{"run", "-m", path, "-p", "Once upon a time", "-n", "100", "--sampler", "greedy", "--ignore-eos", "--json"}
	plain, spec := runPlainAndDrafted(t, args, path)
	require.Len(t, plain.Tokens, 100)
	assert.Equal(t, plain.Tokens, spec.Tokens)
	assert.Equal(t, plain.Text, spec.Text)
	require.NotNil(t, spec.Drafts)
	assert.Positive(t, spec.Drafts.Drafted)
	assert.GreaterOrEqual(t, float64(spec.Drafts.Accepted), 0.9*float64(spec.Drafts.Drafted), "%+v", spec.Drafts)
}

// llamaref is the llama.cpp reference folder (make ref-install) holding
// the qwen2 vocabulary: the parent of testenv.VocabDir.
func llamaref(t *testing.T) string {
	t.Helper()
	return filepath.Dir(filepath.Dir(testenv.VocabFile(t, fixture.VocabFile("qwen2"))))
}

// run --chat on qwen3moe-tiny (one layer, n_embd 64) with the Qwen3 family's
// real vocabulary and chat template (llama.cpp's
// models/templates/Qwen-Qwen3-0.6B.jinja): the prompt is rendered as Qwen3's
// ChatML turn and the turn runs through the WASM policies.
func TestChatMoE(t *testing.T) {
	ref := llamaref(t)
	tmpl, err := os.ReadFile(filepath.Join(ref, "llama.cpp", "models", "templates", "Qwen-Qwen3-0.6B.jinja"))
	require.NoError(t, err)
	vocab, err := gguf.Open(filepath.Join(ref, "vocab", fixture.VocabFile("qwen2")))
	require.NoError(t, err)
	defer vocab.Close()
	c := fixture.Qwen3MoETiny()
	c.Embd, c.Layers, c.Context = 64, 1, 128
	src := filepath.Join(t.TempDir(), "qwen3moe.gguf")
	require.NoError(t, fixture.GenerateFile(src, c, vocab))
	replaced := false
	path := rewriteStories(t, src, func(kv []gguf.KV, _ []gguf.Tensor) {
		for i := range kv {
			if kv[i].Key == gguf.KeyChatTemplate {
				kv[i].Value, replaced = string(tmpl), true
			}
		}
	})
	require.True(t, replaced, "the qwen2 vocabulary carries a chat template to replace")

	stdout, stderr, code := runIn(t, "", "run", "-m", path, "--chat", "-p", "Hello there", "-n", "4", "--echo")
	require.Equal(t, 0, code, stderr)
	assert.True(t, strings.HasPrefix(stdout, "<|im_start|>user\nHello there<|im_end|>\n<|im_start|>assistant\n"), "%q", stdout)
	assert.Contains(t, stderr, "prompt 10 tok")
}
