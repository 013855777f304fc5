package quantize_test

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/gguf"
	"github.com/realizar-host/realizar-host/internal/fixture"
	"github.com/realizar-host/realizar-host/internal/gguftest"
	"github.com/realizar-host/realizar-host/internal/quant"
	"github.com/realizar-host/realizar-host/internal/quantize"
)

// smallVocab is a 512-token vocabulary (gguftest.Vocab).
func smallVocab(t *testing.T) *gguf.File { return gguftest.Vocab(t, 512) }

// narrow is stories260K's shape: rows of 64 (Q4_K falls back to Q5_0) and an
// ffn_down with rows of 172, not a multiple of 32 (it stays F16).
func narrow() fixture.Config {
	c := fixture.Tiny()
	c.Name, c.Embd, c.FF, c.Heads, c.HeadsKV, c.Seed = "fixture-narrow", 64, 172, 8, 4, 9
	return c
}

// source generates the model c with the small vocabulary into dir.
func source(t *testing.T, dir string, c fixture.Config) string {
	t.Helper()
	path := filepath.Join(dir, c.Name+".gguf")
	require.NoError(t, fixture.GenerateFile(path, c, smallVocab(t)))
	return path
}

// rmseBound is the largest RMSE relative to the source's RMS accepted for a
// tensor written as each type. The worst measured on these fixtures
// (QUANTIZE_LOG_RMSE=1 go test -run TestFileRoundTrip -v): Q4_0 0.088, Q4_K
// 0.072, Q5_0 0.044, Q5_1 0.038, Q5_K 0.036, Q6_K 0.018, Q8_0 0.0056, BF16
// 0.0017, F16 0.0002.
var rmseBound = map[gguf.TensorType]float64{
	gguf.TypeF32: 0, gguf.TypeF16: 5e-4, gguf.TypeBF16: 3e-3,
	gguf.TypeQ8_0: 0.008, gguf.TypeQ6_K: 0.025, gguf.TypeQ5_K: 0.05, gguf.TypeQ5_1: 0.05,
	gguf.TypeQ5_0: 0.06, gguf.TypeQ4_K: 0.09, gguf.TypeQ4_0: 0.11,
}

func decode(t *testing.T, f *gguf.File, ti gguf.TensorInfo) []float32 {
	t.Helper()
	data, err := f.TensorData(ti.Name)
	require.NoError(t, err)
	out := make([]float32, ti.Elements())
	require.NoError(t, quant.Dequantize(quant.Type(ti.Type), out, data), ti.Name)
	return out
}

// Every fixture to every file type: the metadata carries over, the types
// follow the plan, and every tensor decodes close to its source.
func TestFileRoundTrip(t *testing.T) {
	dir := t.TempDir()
	configs := []fixture.Config{fixture.Tiny(), fixture.Odd(), fixture.Qwen2Tiny(), narrow()}
	for _, c := range configs {
		src := source(t, dir, c)
		in, err := gguf.Open(src)
		require.NoError(t, err)
		t.Cleanup(func() { in.Close() })
		for _, name := range quantize.FileTypes() {
			ft, err := quantize.ParseFileType(name)
			require.NoError(t, err)
			t.Run(c.Name+"/"+name, func(t *testing.T) {
				dst := filepath.Join(dir, c.Name+"-"+name+".gguf")
				rep, err := quantize.File(dst, src, quantize.Options{FileType: ft, Threads: 3})
				require.NoError(t, err)
				defer os.Remove(dst)
				out, err := gguf.Open(dst)
				require.NoError(t, err)
				defer out.Close()

				v, err := out.Uint32(gguf.KeyFileType)
				require.NoError(t, err)
				assert.Equal(t, uint32(ft), v)
				v, err = out.Uint32(gguf.KeyQuantizationVersion)
				require.NoError(t, err)
				assert.Equal(t, uint32(2), v)
				for _, kv := range in.KV {
					if kv.Key == gguf.KeyFileType {
						continue
					}
					got, ok := out.Lookup(kv.Key)
					require.True(t, ok, kv.Key)
					assert.Equal(t, kv.Value, got, kv.Key)
				}

				require.Len(t, out.Tensors, len(in.Tensors))
				require.Len(t, rep.Tensors, len(in.Tensors))
				for i, ti := range out.Tensors {
					p := rep.Tensors[i]
					assert.Equal(t, p.Name, ti.Name)
					assert.Equal(t, p.To, ti.Type, ti.Name)
					srcInfo, ok := in.Tensor(ti.Name)
					require.True(t, ok)
					assert.Equal(t, srcInfo.Dims, ti.Dims)
					want, got := decode(t, in, srcInfo), decode(t, out, ti)
					var se, ss float64
					for j := range want {
						d := float64(want[j]) - float64(got[j])
						se += d * d
						ss += float64(want[j]) * float64(want[j])
					}
					rel := math.Sqrt(se / ss)
					if os.Getenv("QUANTIZE_LOG_RMSE") != "" {
						t.Logf("rmse %v %.5f", ti.Type, rel)
					}
					assert.LessOrEqual(t, rel, rmseBound[ti.Type], "%s as %v", ti.Name, ti.Type)
				}
				assert.Positive(t, rep.OutputBytes)
			})
		}
	}
}

// typesOf returns name → type of every tensor of a plan.
func typesOf(plans []quantize.TensorPlan) map[string]gguf.TensorType {
	m := make(map[string]gguf.TensorType, len(plans))
	for _, p := range plans {
		m[p.Name] = p.To
	}
	return m
}

// The type rules on the fixtures' shapes, spelled out.
func TestPlanTypes(t *testing.T) {
	dir := t.TempDir()
	const (
		f32, f16, bf16 = gguf.TypeF32, gguf.TypeF16, gguf.TypeBF16
		q40, q50, q51  = gguf.TypeQ4_0, gguf.TypeQ5_0, gguf.TypeQ5_1
		q80, q4k, q5k  = gguf.TypeQ8_0, gguf.TypeQ4_K, gguf.TypeQ5_K
		q6k            = gguf.TypeQ6_K
	)
	tests := []struct {
		config fixture.Config
		ft     quantize.FileType
		want   map[string]gguf.TensorType
	}{
		// Two layers: use_more_bits is true for layer 1 only.
		{fixture.Tiny(), quantize.Q4_KM, map[string]gguf.TensorType{
			"token_embd.weight": q4k, "output.weight": q6k, "output_norm.weight": f32,
			"blk.0.attn_v.weight": q4k, "blk.1.attn_v.weight": q6k,
			"blk.0.ffn_down.weight": q4k, "blk.1.ffn_down.weight": q6k,
			"blk.0.attn_q.weight": q4k, "blk.1.ffn_gate.weight": q4k, "blk.0.attn_norm.weight": f32,
		}},
		{fixture.Tiny(), quantize.Q4_KS, map[string]gguf.TensorType{
			"output.weight": q6k, "blk.0.attn_v.weight": q5k, "blk.1.attn_v.weight": q5k,
			"blk.0.ffn_down.weight": q4k, "blk.1.attn_output.weight": q4k,
		}},
		{fixture.Tiny(), quantize.Q8_0, map[string]gguf.TensorType{
			"token_embd.weight": q80, "output.weight": q80, "blk.1.attn_v.weight": q80, "output_norm.weight": f32,
		}},
		{fixture.Tiny(), quantize.Q4_0, map[string]gguf.TensorType{
			"token_embd.weight": q40, "output.weight": q6k, "blk.1.ffn_down.weight": q40,
		}},
		{fixture.Tiny(), quantize.BF16, map[string]gguf.TensorType{
			"token_embd.weight": bf16, "output.weight": bf16, "blk.0.ffn_norm.weight": f32,
		}},
		// Rows of 288 and 800: Q4_K→Q5_0, Q5_K→Q5_1, Q6_K→Q8_0.
		{fixture.Odd(), quantize.Q4_KM, map[string]gguf.TensorType{
			"output.weight": q80, "blk.1.attn_v.weight": q80, "blk.0.attn_v.weight": q50,
			"blk.0.ffn_down.weight": q50, "blk.1.ffn_down.weight": q80, "token_embd.weight": q50,
		}},
		{fixture.Odd(), quantize.Q4_KS, map[string]gguf.TensorType{
			"blk.0.attn_v.weight": q51, "blk.1.attn_v.weight": q51, "blk.0.ffn_down.weight": q50,
		}},
		// Tied output: token_embd.weight is the output matrix; biases stay F32.
		{fixture.Qwen2Tiny(), quantize.Q4_KM, map[string]gguf.TensorType{
			"token_embd.weight": q6k, "blk.0.attn_q.bias": f32, "blk.1.attn_v.weight": q6k,
		}},
		{fixture.Qwen2Tiny(), quantize.Q8_0, map[string]gguf.TensorType{"token_embd.weight": q80}},
		// qwen3: the per-head norms stay F32; Q (512 wide) and attn_output
		// (rows of 512) take the default type.
		{fixture.Qwen3Tiny(), quantize.Q4_KM, map[string]gguf.TensorType{
			"token_embd.weight": q6k, "blk.0.attn_q_norm.weight": f32, "blk.1.attn_k_norm.weight": f32,
			"blk.0.attn_q.weight": q4k, "blk.0.attn_output.weight": q4k, "blk.1.attn_v.weight": q6k,
		}},
		// qwen3moe with 8 experts: llama.cpp's 8-expert rules make attn_k
		// and attn_v Q8_0 and (Q4_K_M, Q4_K_S) attn_output Q5_K; the router
		// stays F32; the merged expert tensors take ffn_gate/up/down's rules.
		{fixture.Qwen3MoETiny(), quantize.Q4_KM, map[string]gguf.TensorType{
			"token_embd.weight": q6k, "blk.0.ffn_gate_inp.weight": f32, "blk.1.ffn_gate_inp.weight": f32,
			"blk.0.attn_k.weight": q80, "blk.0.attn_v.weight": q80, "blk.1.attn_v.weight": q80,
			"blk.0.attn_output.weight": q5k, "blk.0.attn_q.weight": q4k, "blk.0.attn_k_norm.weight": f32,
			"blk.0.ffn_gate_exps.weight": q4k, "blk.0.ffn_up_exps.weight": q4k,
			"blk.0.ffn_down_exps.weight": q4k, "blk.1.ffn_down_exps.weight": q6k,
		}},
		{fixture.Qwen3MoETiny(), quantize.Q4_KS, map[string]gguf.TensorType{
			"blk.0.attn_v.weight": q80, "blk.1.attn_output.weight": q5k, "blk.0.ffn_down_exps.weight": q4k,
		}},
		{fixture.Qwen3MoETiny(), quantize.Q8_0, map[string]gguf.TensorType{
			"token_embd.weight": q80, "blk.0.ffn_gate_inp.weight": f32, "blk.0.attn_output.weight": q80,
			"blk.1.ffn_down_exps.weight": q80,
		}},
		{fixture.Qwen3MoETiny(), quantize.Q4_0, map[string]gguf.TensorType{
			"blk.0.attn_k.weight": q80, "blk.0.attn_v.weight": q80, "blk.0.attn_output.weight": q40,
			"blk.0.ffn_up_exps.weight": q40,
		}},
		{fixture.Qwen3MoETiny(), quantize.F16, map[string]gguf.TensorType{
			"blk.0.ffn_gate_inp.weight": f32, "blk.0.ffn_down_exps.weight": f16, "blk.0.attn_k.weight": f16,
		}},
		// phi3: attn_qkv takes attn_v's rules (llama.cpp's attn_v category
		// catches it before its own), the fused ffn_up the default type,
		// LongRoPE's factors (1-D) stay F32.
		{fixture.Phi3Tiny(), quantize.Q4_KM, map[string]gguf.TensorType{
			"token_embd.weight": q4k, "output.weight": q6k, "rope_factors_long.weight": f32, "rope_factors_short.weight": f32,
			"blk.0.attn_qkv.weight": q4k, "blk.1.attn_qkv.weight": q6k, "blk.0.ffn_up.weight": q4k,
			"blk.1.ffn_down.weight": q6k, "blk.0.attn_output.weight": q4k,
		}},
		{fixture.Phi3Tiny(), quantize.Q4_KS, map[string]gguf.TensorType{
			"blk.0.attn_qkv.weight": q5k, "blk.1.attn_qkv.weight": q5k, "blk.1.ffn_up.weight": q4k,
		}},
		{fixture.Phi3Tiny(), quantize.Q8_0, map[string]gguf.TensorType{
			"blk.0.attn_qkv.weight": q80, "rope_factors_short.weight": f32, "output.weight": q80,
		}},
		// gemma3: llama.cpp has no rules of its own for it; the tied
		// token_embd takes the output's Q6_K, the post-sublayer and Q/K
		// norms stay F32, attn_v and ffn_down get Q6_K on the
		// use-more-bits layers 2 and 5 of 6 (checked against llama-quantize
		// in the parity suite).
		{fixture.Gemma3Tiny(), quantize.Q4_KM, map[string]gguf.TensorType{
			"token_embd.weight": q6k, "blk.0.post_attention_norm.weight": f32, "blk.5.post_ffw_norm.weight": f32,
			"blk.0.attn_q_norm.weight": f32, "blk.0.attn_v.weight": q4k, "blk.2.attn_v.weight": q6k,
			"blk.5.attn_v.weight": q6k, "blk.2.ffn_down.weight": q6k, "blk.3.ffn_down.weight": q4k,
			"blk.0.attn_output.weight": q4k, "blk.0.ffn_gate.weight": q4k,
		}},
		{fixture.Gemma3Tiny(), quantize.Q8_0, map[string]gguf.TensorType{
			"token_embd.weight": q80, "blk.1.post_ffw_norm.weight": f32, "blk.2.attn_v.weight": q80,
		}},
		// stories260K's shape: ffn_down rows of 172 stay F16 (as F16 from F32).
		{narrow(), quantize.Q8_0, map[string]gguf.TensorType{
			"blk.0.ffn_down.weight": f16, "blk.0.ffn_up.weight": q80, "output.weight": q80,
		}},
		{narrow(), quantize.Q4_KM, map[string]gguf.TensorType{
			"blk.0.ffn_down.weight": f16, "blk.0.ffn_up.weight": q50, "output.weight": q80,
			"blk.1.attn_v.weight": q80,
		}},
	}
	for _, tc := range tests {
		t.Run(tc.config.Name+"/"+tc.ft.String(), func(t *testing.T) {
			path := filepath.Join(dir, tc.config.Name+".gguf")
			if _, err := os.Stat(path); err != nil {
				source(t, dir, tc.config)
			}
			f, err := gguf.Open(path)
			require.NoError(t, err)
			defer f.Close()
			plans, err := quantize.Plan(f, tc.ft)
			require.NoError(t, err)
			got := typesOf(plans)
			for name, typ := range tc.want {
				assert.Equal(t, typ, got[name], name)
			}
		})
	}
}

// Output order is llama.cpp's: tensors outside the blocks by name, then
// block by block (numerically), by name.
func TestPlanOrder(t *testing.T) {
	c := fixture.Tiny()
	c.Layers = 11
	c.Embd, c.FF, c.Heads, c.HeadsKV = 32, 32, 2, 1
	f, err := gguf.Open(source(t, t.TempDir(), c))
	require.NoError(t, err)
	defer f.Close()
	plans, err := quantize.Plan(f, quantize.Q8_0)
	require.NoError(t, err)
	var names []string
	for _, p := range plans {
		names = append(names, p.Name)
	}
	assert.Equal(t, []string{"output.weight", "output_norm.weight", "token_embd.weight"}, names[:3])
	assert.Equal(t, "blk.0.attn_k.weight", names[3])
	i2, i10 := -1, -1
	for i, n := range names {
		if n == "blk.2.attn_k.weight" {
			i2 = i
		}
		if n == "blk.10.attn_k.weight" {
			i10 = i
		}
	}
	assert.Less(t, i2, i10, "block 2 before block 10")
}

func TestErrors(t *testing.T) {
	dir := t.TempDir()
	src := source(t, dir, narrow())

	_, err := quantize.ParseFileType("Q3_K_M")
	require.ErrorIs(t, err, quantize.ErrFileType)
	_, err = quantize.File(filepath.Join(dir, "x.gguf"), src, quantize.Options{FileType: 99})
	require.ErrorIs(t, err, quantize.ErrFileType)
	assert.NoFileExists(t, filepath.Join(dir, "x.gguf"))

	_, err = quantize.File(filepath.Join(dir, "y.gguf"), filepath.Join(dir, "missing.gguf"), quantize.Options{FileType: quantize.Q8_0})
	require.ErrorIs(t, err, os.ErrNotExist)

	// An architecture without rules.
	gpt2 := filepath.Join(dir, "gpt2.gguf")
	require.NoError(t, gguf.WriteFile(gpt2, []gguf.KV{{Key: gguf.KeyArchitecture, Value: "gpt2"}}, nil))
	_, err = quantize.File(filepath.Join(dir, "z.gguf"), gpt2, quantize.Options{FileType: quantize.Q8_0})
	require.ErrorIs(t, err, quantize.ErrArchitecture)
	assert.NoFileExists(t, filepath.Join(dir, "z.gguf"))

	// Experts: a llama with 8 has no rules here (Mixtral's are not
	// ported); a qwen3moe without expert_count is bad metadata.
	for _, tc := range []struct {
		arch    string
		kv      []gguf.KV
		want    error
		mention string
	}{
		{"llama", []gguf.KV{{Key: "llama.expert_count", Value: uint32(8)}}, quantize.ErrArchitecture, "8 experts"},
		{"qwen3moe", nil, quantize.ErrMetadata, "qwen3moe.expert_count"},
		{"qwen3moe", []gguf.KV{{Key: "qwen3moe.expert_count", Value: uint32(0)}}, quantize.ErrMetadata, "qwen3moe.expert_count"},
	} {
		path := filepath.Join(dir, tc.arch+"-experts.gguf")
		kv := append([]gguf.KV{{Key: gguf.KeyArchitecture, Value: tc.arch}, {Key: tc.arch + ".block_count", Value: uint32(1)}}, tc.kv...)
		require.NoError(t, gguf.WriteFile(path, kv, nil))
		_, err = quantize.File(filepath.Join(dir, "e.gguf"), path, quantize.Options{FileType: quantize.Q8_0})
		require.ErrorIs(t, err, tc.want, tc.arch)
		assert.Contains(t, err.Error(), tc.mention)
	}

	// A Q8_0 file cannot become Q4_K_M: the tensor is named.
	q8 := filepath.Join(dir, "q8.gguf")
	_, err = quantize.File(q8, src, quantize.Options{FileType: quantize.Q8_0})
	require.NoError(t, err)
	dst := filepath.Join(dir, "requant.gguf")
	_, err = quantize.File(dst, q8, quantize.Options{FileType: quantize.Q4_KM})
	require.ErrorIs(t, err, quantize.ErrSourceType)
	var te *quantize.TensorError
	require.ErrorAs(t, err, &te)
	assert.True(t, strings.HasSuffix(te.Name, ".weight"), te.Name)
	assert.Contains(t, err.Error(), te.Name)
	assert.NoFileExists(t, dst)

	// Quantizing a file to the type it already has copies every tensor.
	again := filepath.Join(dir, "again.gguf")
	rep, err := quantize.File(again, q8, quantize.Options{FileType: quantize.Q8_0})
	require.NoError(t, err)
	for _, p := range rep.Tensors {
		assert.Equal(t, p.From, p.To, p.Name)
	}
}

// The output does not depend on the number of workers.
func TestThreadsDeterministic(t *testing.T) {
	dir := t.TempDir()
	src := source(t, dir, fixture.Odd())
	var files [][]byte
	for _, n := range []int{1, 4} {
		dst := filepath.Join(dir, fmt.Sprintf("t%d.gguf", n))
		_, err := quantize.File(dst, src, quantize.Options{FileType: quantize.Q4_KM, Threads: n})
		require.NoError(t, err)
		b, err := os.ReadFile(dst)
		require.NoError(t, err)
		files = append(files, b)
	}
	assert.True(t, bytes.Equal(files[0], files[1]))
}
