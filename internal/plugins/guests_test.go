package plugins_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/engine"
	"github.com/realizar-host/realizar-host/engine/enginetest"
	"github.com/realizar-host/realizar-host/host"
)

// The policies written in Rust (min-p, logit-bias) and AssemblyScript
// (max-lines), run by the real host on synthetic logits and scripts.

// minPRule is min-p's rule (plugins/sampler/minp/minp.rs) in the contract's
// arithmetic: keep the tokens with exp(logit - max) >= minP (and the
// maximum), greedy at temp <= 0, otherwise softmax and one draw.
func minPRule(logits []float32, minPValue, temp float64, r *abi.RNG) int32 {
	m := math.Inf(-1)
	for _, l := range logits {
		if l == l && float64(l) > m {
			m = float64(l)
		}
	}
	var ids []int32
	var vals []float32
	for i, l := range logits {
		if x := float64(l); x == m || abi.Exp(x-m) >= minPValue {
			ids, vals = append(ids, int32(i)), append(vals, l)
		}
	}
	abi.SortCandidates(ids, vals)
	if temp <= 0 {
		return ids[0]
	}
	probs := make([]float64, len(ids))
	sum := abi.Softmax(probs, vals, temp)
	return ids[abi.Draw(probs, sum, r.Uniform())]
}

// TestMinPRust: the Rust min-p sampler picks, step by step, the token the rule
// gives for the configured min_p and temperature and the turn's seed, and
// never a token under the threshold.
func TestMinPRust(t *testing.T) {
	h := newHost(t, host.NewConfig())
	v := enginetest.NewTokenVocab(1003, nil) // not a multiple of the guest's 8-entry loop
	tests := []struct {
		config     string
		minP, temp float64
	}{
		{``, 0.05, 1}, // the defaults
		{`{"min_p":0.2}`, 0.2, 1},
		{`{"min_p":0.001,"temperature":1.5}`, 0.001, 1.5},
		{`{"min_p":0,"temperature":0.7}`, 0, 0.7},
		{`{"min_p":1}`, 1, 1},
		{`{"min_p":0.3,"temperature":0}`, 0.3, 0},
		{`{"temperature":-1}`, 0.05, -1},
	}
	for _, tt := range tests {
		t.Run(tt.config, func(t *testing.T) {
			s := newSampler(t, v, load(t, h, "min-p", tt.config))
			for _, seed := range []uint64{1, 0xdeadbeef} {
				require.NoError(t, s.Reset(seed, []int32{1}))
				rng, logits := abi.NewRNG(seed), abi.NewRNG(seed+100)
				for step := range 40 {
					l := randomLogits(&logits, v.Size())
					if step%5 == 0 { // ties at the maximum, NaN and -Inf entries
						top := l[argmax(l)]
						l[17], l[400], l[5], l[6] = top, top, float32(math.NaN()), negInf
					}
					want := minPRule(l, tt.minP, tt.temp, &rng)
					got := sample(t, s, l)
					require.Equal(t, want, got, "seed %d step %d", seed, step)
					m := float64(l[argmax(l)])
					assert.GreaterOrEqual(t, abi.Exp(float64(l[got])-m), tt.minP, "step %d: token %d is under the threshold", step, got)
				}
			}
		})
	}
}

// TestMinPRustEdges: min_p 1 keeps only the ties of the maximum (the draw is
// among them); every logit -Inf still gives a token; min_p 0.5 against
// logit gaps just either side of ln 2.
func TestMinPRustEdges(t *testing.T) {
	h := newHost(t, host.NewConfig())
	v := enginetest.NewTokenVocab(12, nil)
	s := newSampler(t, v, load(t, h, "min-p", `{"min_p":1}`))
	require.NoError(t, s.Reset(9, nil))
	l := []float32{0, 3, 1, 3, 2, 3, 0, 0, 0, 0, 0, 0}
	seen := map[int32]bool{}
	for range 60 {
		seen[sample(t, s, l)] = true
	}
	assert.Equal(t, map[int32]bool{1: true, 3: true, 5: true}, seen)

	for i := range l {
		l[i] = negInf
	}
	assert.Equal(t, int32(0), sample(t, s, l), "every logit -Inf: the lowest id")

	// exp(-gap) >= 0.5 keeps; the Go rule decides, the guest must agree on
	// both sides of the threshold.
	half := newSampler(t, v, load(t, h, "min-p", `{"min_p":0.5,"temperature":1}`))
	require.NoError(t, half.Reset(4, nil))
	for _, gap := range []float32{0.69314, 0.693147, down(0.6931472), 0.6931472, up(0.6931472), 0.69315} {
		for i := range l {
			l[i] = -100
		}
		l[2], l[7] = 10, 10-gap
		kept := abi.Exp(float64(l[7])-10) >= 0.5
		seen := map[int32]bool{}
		for range 40 {
			seen[sample(t, half, l)] = true
		}
		assert.Equal(t, kept, seen[7], "gap %v: token 7 kept %v", gap, kept)
		assert.True(t, seen[2], "gap %v", gap)
	}
}

// TestMinPRustBadConfig: a value out of range, of the wrong type or an unknown
// key is refused at init as ErrBadConfig, with a log line naming the key.
func TestMinPRustBadConfig(t *testing.T) {
	h := newHost(t, host.NewConfig())
	v := enginetest.NewTokenVocab(50, nil)
	for _, tt := range []struct{ config, msg string }{
		{`{"min_p":1.5}`, "config: min_p must be in [0, 1]"},
		{`{"min_p":-0.1}`, "config: min_p must be in [0, 1]"},
		{`{"temperature":true}`, "config: temperature must be a number"},
		{`{"temperature":"hot"}`, "config: temperature must be a number"},
		{`{"min_p":0.1,"mn_p":0.2}`, "config: unknown key mn_p (the keys are min_p, temperature)"},
	} {
		s := newSampler(t, v, load(t, h, "min-p", tt.config))
		err := s.Reset(1, nil)
		require.ErrorIs(t, err, host.ErrBadConfig, tt.config)
		assert.ErrorContains(t, err, tt.msg, tt.config)
	}
}

// TestLogitBiasRust: the Rust processor adds each configured bias (one f32
// addition) or bans the token, leaves every other logit alone, and the
// greedy sampler behind it then picks the biased argmax.
func TestLogitBiasRust(t *testing.T) {
	h := newHost(t, host.NewConfig())
	v := enginetest.NewTokenVocab(300, nil)
	bias := load(t, h, "logit-bias", `{"logit_bias":{"3":50,"7":false,"9":-0.5,"299":1e-3,"3":2.25}}`)
	s := newSampler(t, v, load(t, h, "greedy", ""), bias)
	require.NoError(t, s.Reset(1, nil))
	r := abi.NewRNG(5)
	for step := range 30 {
		orig := randomLogits(&r, v.Size())
		if step%2 == 1 {
			orig[7] = 1000 // banned: must never win
		}
		want := append([]float32(nil), orig...)
		want[3] = orig[3] + 2.25 // the later entry for 3 wins
		want[7] = negInf
		want[9] = orig[9] - 0.5
		want[299] = orig[299] + float32(1e-3)
		got := append([]float32(nil), orig...)
		id, err := s.Sample(got)
		require.NoError(t, err)
		s.Accept(id)
		for i := range want {
			require.Equal(t, math.Float32bits(want[i]), math.Float32bits(got[i]), "step %d logit %d", step, i)
		}
		assert.Equal(t, argmax(want), id, "step %d", step)
		assert.NotEqual(t, int32(7), id)
	}
}

// TestLogitBiasRustConfig: no config edits nothing; bad configs are refused
// at init as ErrBadConfig.
func TestLogitBiasRustConfig(t *testing.T) {
	h := newHost(t, host.NewConfig())
	v := enginetest.NewTokenVocab(100, nil)
	for _, config := range []string{``, `{}`, `{"logit_bias":{}}`} {
		s := newSampler(t, v, load(t, h, "greedy", ""), load(t, h, "logit-bias", config))
		require.NoError(t, s.Reset(1, nil), config)
		r := abi.NewRNG(3)
		l := randomLogits(&r, v.Size())
		got := append([]float32(nil), l...)
		_, err := s.Sample(got)
		require.NoError(t, err)
		assert.Equal(t, l, got, config)
	}
	for _, tt := range []struct{ config, msg string }{
		{`{"logit_bias":{"100":1}}`, "config: logit_bias must be"},
		{`{"logit_bias":{"-1":1}}`, "config: logit_bias must be"},
		{`{"logit_bias":{"x":1}}`, "config: logit_bias must be"},
		{`{"logit_bias":{"1":"2"}}`, "config: logit_bias must be"},
		{`{"logit_bias":{"1":true}}`, "config: logit_bias must be"},
		{`{"logit_bias":[[1,2]]}`, "config: logit_bias must be"},
		{`{"bias":{"1":2}}`, "config: unknown key bias (the keys are logit_bias)"},
	} {
		s := newSampler(t, v, load(t, h, "greedy", ""), load(t, h, "logit-bias", tt.config))
		err := s.Reset(1, nil)
		require.ErrorIs(t, err, host.ErrBadConfig, tt.config)
		assert.ErrorContains(t, err, tt.msg, tt.config)
	}
}

// TestMaxLinesAS: the AssemblyScript stop policy ends the turn at the
// lines-th newline, trimming what follows it in the token (and the newline
// unless keep_newline), through the real Session.
func TestMaxLinesAS(t *testing.T) {
	h := newHost(t, host.NewConfig())
	tests := []struct {
		name     string
		pieces   []string
		config   string
		want     string
		wantStop engine.StopReason
	}{
		{"default: one line", []string{"ab", "c\nd", "e"}, ``, "abc", engine.StopByPolicy},
		{"second newline", []string{"ab", "c\nd", "e\nfg", "h"}, `{"lines":2}`, "abc\nde", engine.StopByPolicy},
		{"keep the newline", []string{"ab", "c\nd", "e\nfg", "h"}, `{"lines":2,"keep_newline":true}`, "abc\nde\n", engine.StopByPolicy},
		{"newline ends the token, kept", []string{"ab\n", "cd"}, `{"keep_newline":true}`, "ab\n", engine.StopByPolicy},
		{"newline is the token", []string{"ab", "\n", "cd"}, `{"lines":1}`, "ab", engine.StopByPolicy},
		{"two newlines in one token", []string{"x\n\ny", "z"}, `{"lines":2}`, "x\n", engine.StopByPolicy},
		{"fewer lines than asked", []string{"a\nb", "c\n", "d"}, `{"lines":3}`, "a\nbc\nd", engine.StopEOG},
		{"no newline", []string{"abc", "def"}, `{"lines":1,"keep_newline":false}`, "abcdef", engine.StopEOG},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newScript(t, tt.pieces)
			p := stopPlugin(t, h, s.vocab, "max-lines", tt.config)
			for turn := range 2 { // the count starts again each turn
				got := s.generate(t, p, 100)
				assert.Equal(t, tt.want, got.text(), "turn %d", turn)
				assert.Equal(t, tt.wantStop, got.turn.Stop, "turn %d", turn)
			}
		})
	}
}

// TestMaxLinesASBadConfig: bad values and unknown keys are refused at init.
func TestMaxLinesASBadConfig(t *testing.T) {
	h := newHost(t, host.NewConfig())
	s := newScript(t, []string{"a"})
	for _, tt := range []struct{ config, msg string }{
		{`{"lines":0}`, "config: lines must be at least 1"},
		{`{"lines":1.5}`, "config: lines must be an integer"},
		{`{"lines":99999999999}`, "config: lines must be an integer"},
		{`{"keep_newline":1}`, "config: keep_newline must be true or false"},
		{`{"lines":2,"line":{"x":[1,"}"]}}`, "config: unknown key line (the keys are lines, keep_newline)"},
	} {
		sp := stopPlugin(t, h, s.vocab, "max-lines", tt.config)
		err := sp.Reset()
		require.ErrorIs(t, err, host.ErrBadConfig, tt.config)
		assert.ErrorContains(t, err, tt.msg, tt.config)
	}
}
