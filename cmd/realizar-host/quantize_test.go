package main

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/realizar-host/realizar-host/gguf"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeF32Model writes a one-layer llama with F32 weights: n_embd 256, n_ff
// 288 (so ffn_down falls back), 8 tokens.
func writeF32Model(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "f32.gguf")
	kv := []gguf.KV{
		{Key: gguf.KeyArchitecture, Value: "llama"},
		{Key: "llama.block_count", Value: uint32(1)},
		{Key: "llama.attention.head_count", Value: uint32(4)},
		{Key: gguf.KeyTokens, Value: []string{"a", "b", "c", "d", "e", "f", "g", "h"}},
	}
	f32 := func(n int) []byte {
		b := make([]byte, 4*n)
		for i := range n {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(math.Sin(float64(i)))))
		}
		return b
	}
	ts := []gguf.Tensor{
		{Name: "token_embd.weight", Type: gguf.TypeF32, Dims: []int64{256, 8}, Data: f32(256 * 8)},
		{Name: "blk.0.attn_v.weight", Type: gguf.TypeF32, Dims: []int64{256, 256}, Data: f32(256 * 256)},
		{Name: "blk.0.ffn_down.weight", Type: gguf.TypeF32, Dims: []int64{288, 256}, Data: f32(288 * 256)},
		{Name: "blk.0.attn_norm.weight", Type: gguf.TypeF32, Dims: []int64{256}, Data: f32(256)},
		{Name: "output.weight", Type: gguf.TypeF32, Dims: []int64{256, 8}, Data: f32(256 * 8)},
	}
	require.NoError(t, gguf.WriteFile(path, kv, ts))
	return path
}

func TestQuantizeBinary(t *testing.T) {
	bin := buildBinary(t)
	in := writeF32Model(t)
	out := filepath.Join(t.TempDir(), "q.gguf")

	stdout, stderr, code := runBinary(t, bin, "quantize", in, out, "q4_k_m", "--threads", "2")
	require.Equal(t, 0, code, stderr)
	assert.Empty(t, stderr)
	assert.Equal(t, 1, strings.Count(stdout, "\n"), stdout)
	assert.Contains(t, stdout, "Q4_K_M, 5 tensors")

	js, _, code := runBinary(t, bin, "inspect", "--json", out)
	require.Equal(t, 0, code)
	var rep report
	require.NoError(t, json.Unmarshal([]byte(js), &rep))
	var types []string
	for _, tc := range rep.Types {
		types = append(types, tc.Type)
	}
	// attn_v and ffn_down of the only layer get Q6_K (use_more_bits); rows of
	// 288 fall back to Q8_0; the norm stays F32.
	assert.Equal(t, []string{"F32", "Q4_K", "Q6_K", "Q8_0"}, types)

	garbage := filepath.Join(t.TempDir(), "garbage.gguf")
	require.NoError(t, os.WriteFile(garbage, []byte("not a gguf file at all, really"), 0o644))
	tests := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"missing type", []string{"quantize", in, out}, exitUsage, "accepts 3 arg"},
		{"unknown type", []string{"quantize", in, out, "Q3_K_M"}, exitUsage, "unknown file type"},
		{"negative threads", []string{"quantize", in, out, "Q8_0", "--threads", "-1"}, exitUsage, "negative"},
		{"missing input", []string{"quantize", "/absent/in.gguf", out, "Q8_0"}, exitBadFile, "/absent/in.gguf"},
		{"bad input", []string{"quantize", garbage, out, "Q8_0"}, exitBadFile, "bad magic"},
		{"requantize", []string{"quantize", writeModel(t), out, "Q8_0"}, exitBadFile, "cannot be converted"},
		{"unwritable output", []string{"quantize", in, "/absent/dir/out.gguf", "Q8_0"}, exitFailure, "/absent/dir/out.gguf"},
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
