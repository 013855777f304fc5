package cuda

import (
	"bytes"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/gguf"
	"github.com/realizar-host/realizar-host/internal/arch"
	"github.com/realizar-host/realizar-host/internal/fixture"
	"github.com/realizar-host/realizar-host/internal/gguftest"
	"github.com/realizar-host/realizar-host/internal/quant"
	"github.com/realizar-host/realizar-host/model"
)

func TestCheckArch(t *testing.T) {
	for _, tc := range []struct {
		cfg model.Config
		ok  bool
	}{
		{model.Config{Arch: "llama", RopeAttnFactor: 1}, true},
		{model.Config{Arch: "qwen2", RopeAttnFactor: 1}, true},
		{model.Config{Arch: "qwen2", RopeAttnFactor: 1, RopeYaRN: true}, true},
		{model.Config{Arch: "llama", RopeAttnFactor: 0.5}, true},
		{model.Config{Arch: "qwen3", QKNorm: true}, true},
		{model.Config{Arch: "llama", HeadDim: 64, RopeDims: 32}, true},
		{model.Config{Arch: "qwen3moe", QKNorm: true, Experts: 8, ExpertsUsed: 2}, true},
		{model.Config{Arch: "qwen2", Experts: 8, ExpertsUsed: 2}, true},
		{model.Config{Arch: "llama", RopeAttnFactor: 1, QKNorm: true}, true},
		{model.Config{Arch: "phi3", RopeAttnFactor: 1, ScaleQ: true, FusedFFN: true}, true},
		{model.Config{Arch: "llama", RopeAttnFactor: 1, FusedFFN: true}, true},
		{model.Config{Arch: "gemma3"}, true},
		{model.Config{Arch: "gemma3", RopeAttnFactor: 1, QKNorm: true, ScaleQ: true, GELU: true, PostNorms: true,
			EmbdScale: 16, SlidingWindow: 40, SlidingLayers: []bool{true, false}}, true},
		{model.Config{Arch: "llama", RopeAttnFactor: 1, GELU: true}, true},
		{model.Config{Arch: "llama", RopeAttnFactor: 1, SlidingLayers: []bool{true}}, true},
		{model.Config{Arch: "llama", RopeAttnFactor: 1, LogitSoftcap: 30}, true},
		{model.Config{Arch: "mamba", RopeAttnFactor: 1}, false},
	} {
		err := checkArch(tc.cfg)
		if tc.ok {
			assert.NoError(t, err, tc.cfg.Arch)
			continue
		}
		require.ErrorIs(t, err, ErrUnsupportedArch, tc.cfg.Arch)
		assert.Contains(t, err.Error(), `"`+tc.cfg.Arch+`"`)
	}
}

// TestCheckArchRegistry checks checkArch against every registration: the
// first preset of each architecture (plain RoPE, no YaRN) runs on the GPU
// exactly when its registration says GPU.
func TestCheckArchRegistry(t *testing.T) {
	vocab := gguftest.Vocab(t, 64)
	for _, name := range arch.Names() {
		a, _ := arch.Lookup(name)
		p := a.Presets[0]
		var buf bytes.Buffer
		require.NoError(t, fixture.Generate(&buf, p, vocab), name)
		f, err := gguf.NewFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
		require.NoError(t, err, name)
		c, err := model.ReadConfig(f)
		require.NoError(t, err, name)
		err = checkArch(c)
		if a.GPU {
			assert.NoError(t, err, name)
			continue
		}
		require.ErrorIs(t, err, ErrUnsupportedArch, name)
		assert.Contains(t, err.Error(), `"`+name+`"`)
	}
}

func TestPlanPoolSizes(t *testing.T) {
	// Bytes per row of 256 values, per type (ggml's block sizes).
	for _, tc := range []struct {
		typ  quant.Type
		row  int64
		cols int
	}{
		{quant.F32, 1024, 256}, {quant.F16, 512, 256}, {quant.BF16, 512, 256},
		{quant.Q4_0, 8 * 18, 256}, {quant.Q4_1, 8 * 20, 256}, {quant.Q5_0, 8 * 22, 256},
		{quant.Q5_1, 8 * 24, 256}, {quant.Q8_0, 8 * 34, 256},
		{quant.Q4_K, 144, 256}, {quant.Q5_K, 176, 256}, {quant.Q6_K, 210, 256},
	} {
		p, err := planPool([]poolTensor{{name: "w", typ: tc.typ, rows: 3, cols: tc.cols}})
		require.NoError(t, err, tc.typ)
		assert.Equal(t, tc.row, p.tensors[0].rowBytes, tc.typ)
		assert.Equal(t, 3*tc.row, p.tensors[0].size, tc.typ)
		assert.Equal(t, alignUp(3*tc.row, poolAlign), p.size, tc.typ)
	}
}

func TestPlanPoolOffsets(t *testing.T) {
	ts := []poolTensor{
		{name: "a", typ: quant.Q6_K, rows: 1, cols: 256},  // 210 bytes
		{name: "b", typ: quant.F32, rows: 1, cols: 64},    // 256 bytes
		{name: "c", typ: quant.Q4_0, rows: 5, cols: 32},   // 90 bytes
		{name: "d", typ: quant.F16, rows: 0, cols: 8},     // empty
		{name: "e", typ: quant.Q4_K, rows: 7, cols: 512},  // 2016 bytes
		{name: "f", typ: quant.Q8_0, rows: 1, cols: 8192}, // 8704 bytes
	}
	p, err := planPool(ts)
	require.NoError(t, err)
	want := []int64{0, 256, 512, 768, 768, 2816}
	for i, pl := range p.tensors {
		assert.Equal(t, ts[i].name, pl.name)
		assert.Equal(t, want[i], pl.offset, pl.name)
		assert.Zero(t, pl.offset%poolAlign, pl.name)
		if i > 0 {
			prev := p.tensors[i-1]
			assert.GreaterOrEqual(t, pl.offset, prev.offset+prev.size, "%s overlaps %s", pl.name, prev.name)
		}
	}
	assert.Equal(t, int64(2816+8704), p.size) // 11520 is 45*256
	assert.Zero(t, p.size%poolAlign)
}

func TestPlanPoolRejects(t *testing.T) {
	for _, tc := range []struct {
		name string
		t    poolTensor
		is   error
	}{
		{"Q8_K weights", poolTensor{name: "blk.0.ffn_up.weight", typ: quant.Q8_K, rows: 1, cols: 256}, ErrUnsupportedType},
		{"unknown type", poolTensor{name: "blk.1.attn_q.weight", typ: quant.Type(23), rows: 1, cols: 256}, ErrUnsupportedType},
		{"partial block", poolTensor{name: "output.weight", typ: quant.Q4_K, rows: 1, cols: 100}, quant.ErrRowLength},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := planPool([]poolTensor{{name: "ok", typ: quant.F32, rows: 1, cols: 4}, tc.t})
			require.Error(t, err)
			assert.ErrorIs(t, err, tc.is)
			var te *TensorError
			require.True(t, errors.As(err, &te))
			assert.Equal(t, tc.t.name, te.Tensor)
			assert.Contains(t, err.Error(), tc.t.name)
		})
	}
}
