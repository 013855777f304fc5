package model

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/gguf"
)

// logf gives glibc's logf bits (testdata/logf_glibc.txt, from glibc 2.36
// on x86-64) for every value RoPE scaling takes it of.
func TestLogfMatchesGlibc(t *testing.T) {
	n := 0
	for _, row := range glibcTable(t, "testdata/logf_glibc.txt", 2) {
		x := math.Float32frombits(row[0])
		assert.Equal(t, row[1], math.Float32bits(logf(x)), "logf(%g)", x)
		n++
	}
	assert.Greater(t, n, 40)
}

// The RoPE scaling keys decode as llama.cpp reads them: yarn with its
// original context and magnitude factor, "none" never scales, attn_factor
// multiplies, and a non-positive attn_factor is an error naming the key.
func TestRopeScalingConfig(t *testing.T) {
	kv := func(pairs ...any) []gguf.KV {
		var out []gguf.KV
		for i := 0; i < len(pairs); i += 2 {
			out = append(out, gguf.KV{Key: "llama." + pairs[i].(string), Value: pairs[i+1]})
		}
		return out
	}
	tests := []struct {
		name      string
		kv        []gguf.KV
		yarn      bool
		freqScale float32
		orig      int
		attn      float32
		errKey    string
	}{
		{"unscaled", nil, false, 1, 64, 1, ""},
		{"linear", kv("rope.scaling.type", "linear", "rope.scaling.factor", float32(2)), false, 0.5, 64, 1, ""},
		{"none ignores the factor", kv("rope.scaling.type", "none", "rope.scaling.factor", float32(2)), false, 1, 64, 1, ""},
		{"linear attn factor", kv("rope.scaling.type", "linear", "rope.scaling.factor", float32(2),
			"rope.scaling.attn_factor", float32(0.5)), false, 0.5, 64, 0.5, ""},
		{"yarn", kv("rope.scaling.type", "yarn", "rope.scaling.factor", float32(4),
			"rope.scaling.original_context_length", uint32(16)), true, 0.25, 16, yarnAttnFactor(0.25), ""},
		{"yarn default original context", kv("rope.scaling.type", "yarn", "rope.scaling.factor", float32(4)),
			true, 0.25, 64, yarnAttnFactor(0.25), ""},
		{"bad attn factor", kv("rope.scaling.type", "linear", "rope.scaling.factor", float32(2),
			"rope.scaling.attn_factor", float32(0)), false, 0, 0, 0, "llama.rope.scaling.attn_factor"},
		{"longrope", kv("rope.scaling.type", "longrope"), false, 0, 0, 0, "llama.rope.scaling.type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sp := tinySpec("llama")
			sp.extraKV = tt.kv
			f, err := gguf.Open(sp.write(t))
			require.NoError(t, err)
			defer f.Close()
			_, err = Load(f, Options{Threads: 1})
			if tt.errKey != "" {
				var ce *ConfigError
				require.ErrorAs(t, err, &ce)
				assert.Equal(t, tt.errKey, ce.Key)
				return
			}
			c, err := decodeConfig(f)
			require.NoError(t, err)
			assert.Equal(t, tt.yarn, c.RopeYaRN)
			assert.Equal(t, tt.freqScale, c.RopeFreqScale)
			assert.Equal(t, tt.orig, c.RopeOrigCtx)
			assert.Equal(t, tt.attn, c.RopeAttnFactor)
		})
	}
	// YaRN's magnitude at factor 4: (1 + 0.1·ln 4) / (1 + 0.1·ln 4) ≈ 1.
	assert.InDelta(t, 1, yarnAttnFactor(0.25), 1e-6)
}

// YaRN's table against the formula in float64: pairs below the correction
// dims keep the original angle (extrapolation), those above take the
// interpolated one, those between mix them by the ramp; every cos and sin
// carries the magnitude 1 + 0.1·ln(factor). Off YaRN the table is
// unchanged by the new fields (mscale 1).
func TestRopeYaRNTable(t *testing.T) {
	const dims, factor, orig, base = 64, 4, 128, 10000
	r := newRope(ropeParams{kind: RopeNorm, dims: dims, base: base, freqScale: 1.0 / factor, attnFactor: yarnAttnFactor(1.0 / factor),
		yarn: true, origCtx: orig}, nil)
	corr := func(beta float64) float64 {
		return dims * math.Log(orig/(beta*2*math.Pi)) / (2 * math.Log(base))
	}
	lo, hi := math.Max(0, math.Floor(corr(32))), math.Min(dims-1, math.Ceil(corr(1)))
	assert.Equal(t, [2]float32{float32(lo), float32(hi)}, r.corr)
	cs := make([]float32, dims)
	const pos = 300
	r.table(cs, pos)
	mag := float64(yarnAttnFactor(1.0/factor)) * (1 + 0.1*math.Log(factor))
	for i := 0; i < dims/2; i++ {
		extrap := pos * math.Pow(base, -2*float64(i)/dims)
		ramp := 1 - math.Min(1, math.Max(0, (float64(i)-lo)/math.Max(0.001, hi-lo)))
		theta := extrap/factor*(1-ramp) + extrap*ramp
		assert.InDelta(t, mag*math.Cos(theta), cs[2*i], 2e-3, "pair %d cos", i)
		assert.InDelta(t, mag*math.Sin(theta), cs[2*i+1], 2e-3, "pair %d sin", i)
	}

	plain := newRope(ropeParams{kind: RopeNorm, dims: dims, base: base, freqScale: 1, attnFactor: 1}, nil)
	plain.table(cs, pos)
	s, c := sincosf(pos)
	assert.Equal(t, c, cs[0])
	assert.Equal(t, s, cs[1])
}
