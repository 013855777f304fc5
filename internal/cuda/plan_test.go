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
		p, err := planPool([]poolTensor{{Name: "w", Type: tc.typ, Rows: 3, Cols: tc.cols}})
		require.NoError(t, err, tc.typ)
		assert.Equal(t, tc.row, p.Tensors[0].RowBytes, tc.typ)
		assert.Equal(t, 3*tc.row, p.Tensors[0].Size, tc.typ)
		assert.Equal(t, alignUp(3*tc.row, poolAlign), p.Size, tc.typ)
	}
}

func TestPlanPoolOffsets(t *testing.T) {
	ts := []poolTensor{
		{Name: "a", Type: quant.Q6_K, Rows: 1, Cols: 256},  // 210 bytes
		{Name: "b", Type: quant.F32, Rows: 1, Cols: 64},    // 256 bytes
		{Name: "c", Type: quant.Q4_0, Rows: 5, Cols: 32},   // 90 bytes
		{Name: "d", Type: quant.F16, Rows: 0, Cols: 8},     // empty
		{Name: "e", Type: quant.Q4_K, Rows: 7, Cols: 512},  // 2016 bytes
		{Name: "f", Type: quant.Q8_0, Rows: 1, Cols: 8192}, // 8704 bytes
	}
	p, err := planPool(ts)
	require.NoError(t, err)
	want := []int64{0, 256, 512, 768, 768, 2816}
	for i, pl := range p.Tensors {
		assert.Equal(t, ts[i].Name, pl.Name)
		assert.Equal(t, want[i], pl.Offset, pl.Name)
		assert.Zero(t, pl.Offset%poolAlign, pl.Name)
		if i > 0 {
			prev := p.Tensors[i-1]
			assert.GreaterOrEqual(t, pl.Offset, prev.Offset+prev.Size, "%s overlaps %s", pl.Name, prev.Name)
		}
	}
	assert.Equal(t, int64(2816+8704), p.Size) // 11520 is 45*256
	assert.Zero(t, p.Size%poolAlign)
}

func TestPlanPoolRejects(t *testing.T) {
	for _, tc := range []struct {
		name string
		t    poolTensor
		is   error
	}{
		{"Q8_K weights", poolTensor{Name: "blk.0.ffn_up.weight", Type: quant.Q8_K, Rows: 1, Cols: 256}, ErrUnsupportedType},
		{"unknown type", poolTensor{Name: "blk.1.attn_q.weight", Type: quant.Type(23), Rows: 1, Cols: 256}, ErrUnsupportedType},
		{"partial block", poolTensor{Name: "output.weight", Type: quant.Q4_K, Rows: 1, Cols: 100}, quant.ErrRowLength},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := planPool([]poolTensor{{Name: "ok", Type: quant.F32, Rows: 1, Cols: 4}, tc.t})
			require.Error(t, err)
			assert.ErrorIs(t, err, tc.is)
			var te *TensorError
			require.True(t, errors.As(err, &te))
			assert.Equal(t, tc.t.Name, te.Tensor)
			assert.Contains(t, err.Error(), tc.t.Name)
		})
	}
}
