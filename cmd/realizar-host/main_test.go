package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/realizar-host/realizar-host/gguf"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// buildBinary compiles realizar-host into a temporary folder.
func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "realizar-host")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	return bin
}

// writeModel writes a small synthetic llama GGUF with a mix of tensor types.
func writeModel(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "model.gguf")
	kv := []gguf.KV{
		{Key: gguf.KeyArchitecture, Value: "llama"},
		{Key: gguf.KeyName, Value: "synthetic"},
		{Key: "llama.context_length", Value: uint32(128)},
		{Key: "llama.embedding_length", Value: uint32(256)},
		{Key: "llama.block_count", Value: uint32(1)},
		{Key: "llama.feed_forward_length", Value: uint32(512)},
		{Key: "llama.attention.head_count", Value: uint32(4)},
		{Key: "llama.attention.head_count_kv", Value: uint32(2)},
		{Key: "llama.rope.freq_base", Value: float32(10000)},
		{Key: "llama.attention.layer_norm_rms_epsilon", Value: float32(1e-5)},
		{Key: gguf.KeyTokenizerModel, Value: "llama"},
		{Key: gguf.KeyTokens, Value: []string{"<unk>", "<s>", "</s>"}},
	}
	ts := []gguf.Tensor{
		{Name: "token_embd.weight", Type: gguf.TypeQ4_K, Dims: []int64{256, 3}, Data: make([]byte, 3*144)},
		{Name: "blk.0.attn_q.weight", Type: gguf.TypeQ4_K, Dims: []int64{256, 256}, Data: make([]byte, 256*144)},
		{Name: "blk.0.ffn_down.weight", Type: gguf.TypeQ6_K, Dims: []int64{512, 256}, Data: make([]byte, 256*2*210)},
		{Name: "output_norm.weight", Type: gguf.TypeF32, Dims: []int64{256}, Data: make([]byte, 1024)},
	}
	require.NoError(t, gguf.WriteFile(path, kv, ts))
	return path
}

func runBinary(t *testing.T, bin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	// The tests name their models; a developer's $REALIZAR_MODEL must not leak in.
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, envModel+"=") })
	err := cmd.Run()
	code = 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return out.String(), errb.String(), code
}

func TestInspectBinary(t *testing.T) {
	bin := buildBinary(t)
	model := writeModel(t)

	out, _, code := runBinary(t, bin, "inspect", model, "--json")
	require.Equal(t, 0, code)
	var rep report
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.Equal(t, "llama", rep.Architecture)
	assert.Equal(t, "synthetic", rep.Name)
	require.NotNil(t, rep.Hyperparameters.EmbeddingLength)
	assert.Equal(t, uint32(256), *rep.Hyperparameters.EmbeddingLength)
	require.NotNil(t, rep.Hyperparameters.HeadCountKV)
	assert.Equal(t, uint32(2), *rep.Hyperparameters.HeadCountKV)
	require.NotNil(t, rep.Hyperparameters.RopeFreqBase)
	assert.Equal(t, float32(10000), *rep.Hyperparameters.RopeFreqBase)
	require.NotNil(t, rep.Hyperparameters.VocabSize)
	assert.Equal(t, uint32(3), *rep.Hyperparameters.VocabSize)
	assert.Equal(t, tokenizerInfo{Model: "llama", Tokens: 3}, rep.Tokenizer)
	assert.Equal(t, 4, rep.TensorCount)
	assert.Equal(t, []typeCount{
		{Type: "F32", Tensors: 1, Bytes: 1024},
		{Type: "Q4_K", Tensors: 2, Bytes: (3 + 256) * 144},
		{Type: "Q6_K", Tensors: 1, Bytes: 512 * 210},
	}, rep.Types)
	st, err := os.Stat(model)
	require.NoError(t, err)
	assert.Equal(t, st.Size(), rep.FileSize)

	text, _, code := runBinary(t, bin, "inspect", model)
	require.Equal(t, 0, code)
	for _, want := range []string{"architecture:", "llama", "block_count:", "Q4_K", "2 tensors", "tokenizer:"} {
		assert.Contains(t, text, want)
	}
	byFlag, _, code := runBinary(t, bin, "inspect", "--model", model)
	require.Equal(t, 0, code)
	assert.Equal(t, text, byFlag, "--model names the file like the argument (as for run, chat, bench)")
}

func TestExitCodes(t *testing.T) {
	bin := buildBinary(t)
	garbage := filepath.Join(t.TempDir(), "garbage.gguf")
	require.NoError(t, os.WriteFile(garbage, []byte("not a gguf file at all, really"), 0o644))
	tests := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"no model", []string{"inspect"}, exitUsage, "no model"},
		{"model twice", []string{"inspect", "a.gguf", "--model", "b.gguf"}, exitUsage, "not both"},
		{"unknown command", []string{"bogus"}, exitUsage, "unknown command"},
		{"unknown flag", []string{"inspect", "--nope", "x"}, exitUsage, "unknown flag"},
		{"missing file", []string{"inspect", "/absent/model.gguf"}, exitBadFile, "/absent/model.gguf"},
		{"bad file", []string{"inspect", garbage}, exitBadFile, "bad magic"},
		{"unknown preset", []string{"fixture", "--preset", "nope", "--out", "x"}, exitUsage, "unknown preset"},
		{"fixture without out", []string{"fixture", "--preset", "tiny"}, exitUsage, "out"},
		{"fixture of an unknown type", []string{"fixture", "--preset", "tiny", "--type", "Q3_K", "--out", "x"}, exitUsage, "unknown file type"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := runBinary(t, bin, tc.args...)
			assert.Equal(t, tc.code, code)
			assert.Contains(t, stderr, tc.msg)
			assert.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
		})
	}
}

// TestFixtureCommand writes the tiny preset with the embedded vocab and
// inspects it.
func TestFixtureCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 70 MB model")
	}
	bin := buildBinary(t)
	out := filepath.Join(t.TempDir(), "tiny.gguf")
	stdout, stderr, code := runBinary(t, bin, "fixture", "--preset", "tiny", "--out", out, "--seed", "9")
	require.Equal(t, 0, code, stderr)
	assert.Regexp(t, `^`+regexp.QuoteMeta(out)+`: preset tiny, \d+\.\d MB\n$`, stdout, "one line: path, preset, size")
	js, _, code := runBinary(t, bin, "inspect", "--json", out)
	require.Equal(t, 0, code)
	var rep report
	require.NoError(t, json.Unmarshal([]byte(js), &rep))
	assert.Equal(t, "fixture-tiny", rep.Name)
	assert.Equal(t, 21, rep.TensorCount)
	assert.Equal(t, "llama", rep.Tokenizer.Model)
	assert.Equal(t, 32000, rep.Tokenizer.Tokens)

	// --type: written quantized directly, with quantize's summary line.
	q8 := filepath.Join(t.TempDir(), "tiny-q8_0.gguf")
	stdout, stderr, code = runBinary(t, bin, "fixture", "--preset", "tiny", "--type", "q8_0", "--out", q8, "--seed", "9")
	require.Equal(t, 0, code, stderr)
	assert.Regexp(t, `^`+regexp.QuoteMeta(q8)+`: Q8_0, 21 tensors \(F32 5, Q8_0 16\), \d+\.\d MB \(\d+\.\d MB as floats, never written\) in `, stdout,
		"the float size is said to be one never written (make demo's 110M fixture: no 537 MB file)")
	js, _, code = runBinary(t, bin, "inspect", "--json", q8)
	require.Equal(t, 0, code)
	require.NoError(t, json.Unmarshal([]byte(js), &rep))
	assert.Equal(t, 21, rep.TensorCount)
}

// TestHelp: fixture is listed (it is the documented way to get a test
// model) and quantize names the types it writes.
func TestHelp(t *testing.T) {
	bin := buildBinary(t)
	out, _, code := runBinary(t, bin, "--help")
	require.Equal(t, 0, code)
	assert.Regexp(t, `(?m)^\s+fixture\s+Write a random-weight GGUF model`, out)
	assert.Regexp(t, `(?m)^\s+quantize\s+Quantize .* to BF16, F16, Q4_0, Q4_K_M, Q4_K_S, Q8_0 `, out)
	out, _, code = runBinary(t, bin, "quantize", "--help")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "TYPE is one of BF16, F16, Q4_0, Q4_K_M, Q4_K_S, Q8_0")
}
