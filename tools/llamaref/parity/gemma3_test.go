package parity

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/gguf"
	"github.com/realizar-host/realizar-host/internal/fixture"
	"github.com/realizar-host/realizar-host/tools/llamaref/internal/reftest"
	"github.com/realizar-host/realizar-host/tools/llamaref/ref"
)

// geluTableSHA256 is the digest package model's GELU table must have
// (model/gelu_test.go, TestGELUTableIsGGMLs): the SHA-256 of llama.cpp's
// ggml_table_gelu_f16 as 65536 little-endian f16.
const geluTableSHA256 = "5eceda6f287dec9dc0bcfa24516d6744a031a5c52d1984688b4558aeb1daf909"

// The CPU backend's GELU table, which gemma3's GELU-gated FFN looks its
// activations up in, is the one package model computes (checked there
// against this digest): on this machine's backend variant too.
func TestGELUTable(t *testing.T) {
	l := reftest.Lib(t)
	table, err := l.GELUTableF16()
	if err != nil {
		reftest.Missing(t, err)
	}
	b := make([]byte, 2*len(table))
	for i, v := range table {
		binary.LittleEndian.PutUint16(b[2*i:], v)
	}
	sum := sha256.Sum256(b)
	t.Logf("%s: ggml_table_gelu_f16 sha256 %x", l.CPUBackend(), sum)
	assert.Equal(t, geluTableSHA256, hex.EncodeToString(sum[:]))
}

// gemma3's metadata the preset leaves at llama.cpp's defaults, against
// llama.cpp, F32: a per-layer bool pattern (sliding, global, sliding,
// sliding, global, sliding), a window of 7, the sliding layers' own RoPE
// base (20000) and a logit softcap (15). 64 teacher-forced positions,
// bit-identical.
func TestGemma3MetadataVariant(t *testing.T) {
	l := reftest.Lib(t)
	vocab, err := fixture.LlamaVocab()
	require.NoError(t, err)
	defer vocab.Close()
	c := fixture.Gemma3Tiny()
	c.SlidingWindow, c.RopeBaseSWA, c.LogitSoftcap = 7, 20000, 15
	path := filepath.Join(t.TempDir(), "variant.gguf")
	require.NoError(t, fixture.GenerateFile(path, c, vocab))
	path = rewriteKV(t, path, gguf.KV{Key: "gemma3.attention.sliding_window_pattern",
		Value: []bool{true, false, true, true, false, true}})
	rm := reftest.Model(t, l, path)
	toks := storyTokens(t, rm)[:64]
	rc := reftest.Context(t, rm, ref.ContextConfig{NCtx: refContext, NBatch: 1})
	want, err := rc.Logits(toks)
	require.NoError(t, err)
	s := loadOurs(t, path, 2).NewSequence()
	same := 0
	for i, tok := range toks {
		got, err := s.Step(tok, i)
		require.NoError(t, err)
		if slices.Equal(bitsOf(got), bitsOf(want[i])) {
			same++
		}
	}
	t.Logf("%d of %d positions bit-identical", same, len(toks))
	assert.Equal(t, len(toks), same)
}

// rewriteKV writes a copy of path with each of kv set (replacing a key it
// has, else appended) and returns the copy's path.
func rewriteKV(t *testing.T, path string, kv ...gguf.KV) string {
	t.Helper()
	f, err := gguf.Open(path)
	require.NoError(t, err)
	defer f.Close()
	out := append([]gguf.KV(nil), f.KV...)
	for _, p := range kv {
		i := slices.IndexFunc(out, func(o gguf.KV) bool { return o.Key == p.Key })
		if i >= 0 {
			out[i].Value = p.Value
		} else {
			out = append(out, p)
		}
	}
	var ts []gguf.Tensor
	for _, ti := range f.Tensors {
		data, err := f.TensorData(ti.Name)
		require.NoError(t, err)
		ts = append(ts, gguf.Tensor{Name: ti.Name, Type: ti.Type, Dims: ti.Dims, Data: data})
	}
	edited := path[:len(path)-len(".gguf")] + "-edited.gguf"
	require.NoError(t, gguf.WriteFile(edited, out, ts))
	return edited
}
