package plugins_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/plugins"
	"github.com/realizar-host/realizar-host/plugins/sampler/standard"
)

func ptr[T any](v T) *T { return &v }

// TestStandardConfig: Config writes exactly the fields that are set, as
// the sampler reads them (ParseConfig gives the same values).
func TestStandardConfig(t *testing.T) {
	tests := []struct {
		cfg  plugins.Standard
		json string
	}{
		{plugins.Standard{}, `{}`},
		{plugins.Standard{Temperature: ptr(0.0), TopK: ptr(0)}, `{"temperature":0,"top_k":0}`},
		{plugins.Standard{TopP: ptr(0.9), RepeatLastN: ptr(-1), PresencePenalty: ptr(-2.0)},
			`{"presence_penalty":-2,"repeat_last_n":-1,"top_p":0.9}`},
		{plugins.Standard{LogitBias: map[int32]float64{3: math.Inf(-1), 7: 1.5}}, `{"logit_bias":{"3":false,"7":1.5}}`},
		{plugins.Standard{TopNSigma: ptr(-1.0), XTCProbability: ptr(0.5), XTCThreshold: ptr(0.2), DynatempRange: ptr(0.3),
			DynatempExponent: ptr(2.0)},
			`{"top_n_sigma":-1,"xtc_probability":0.5,"xtc_threshold":0.2,"dynatemp_range":0.3,"dynatemp_exponent":2}`},
	}
	for _, tt := range tests {
		assert.JSONEq(t, tt.json, string(tt.cfg.Config()))
		require.NoError(t, tt.cfg.Check(10), tt.json)
	}
	got, err := standard.ParseConfig(plugins.Standard{Temperature: ptr(0.5), TopK: ptr(7),
		LogitBias: map[int32]float64{2: -1}}.Config())
	require.NoError(t, err)
	want := standard.DefaultConfig()
	want.Temperature, want.TopK, want.LogitBias = 0.5, 7, []standard.Bias{{ID: 2, Value: -1}}
	assert.Equal(t, want, got)
}

// TestStandardCheck: a value outside the sampler's ranges is a
// *standard.RangeError naming the key, as the sampler's own check gives it.
func TestStandardCheck(t *testing.T) {
	tests := []struct {
		cfg       plugins.Standard
		key, want string
	}{
		{plugins.Standard{Temperature: ptr(-0.1)}, "temperature", ">= 0"},
		{plugins.Standard{Temperature: ptr(math.NaN())}, "temperature", "a finite number"},
		{plugins.Standard{TopK: ptr(-1)}, "top_k", ">= 0"},
		{plugins.Standard{TopK: ptr(1 << 40)}, "top_k", "a 32-bit integer"},
		{plugins.Standard{TopP: ptr(1.5)}, "top_p", "in [0, 1]"},
		{plugins.Standard{MinP: ptr(-1.0)}, "min_p", "in [0, 1]"},
		{plugins.Standard{TypicalP: ptr(2.0)}, "typical_p", "in [0, 1]"},
		{plugins.Standard{RepeatPenalty: ptr(0.0)}, "repeat_penalty", "> 0"},
		{plugins.Standard{RepeatLastN: ptr(-2)}, "repeat_last_n", ">= -1"},
		{plugins.Standard{PresencePenalty: ptr(2.5)}, "presence_penalty", "in [-2, 2]"},
		{plugins.Standard{FrequencyPenalty: ptr(math.Inf(1))}, "frequency_penalty", "a finite number"},
		{plugins.Standard{TopNSigma: ptr(-0.5)}, "top_n_sigma", ">= 0 (0 or -1: off)"},
		{plugins.Standard{XTCThreshold: ptr(0.6)}, "xtc_threshold", "in [0, 0.5]"},
		{plugins.Standard{XTCProbability: ptr(-0.1)}, "xtc_probability", "in [0, 1]"},
		{plugins.Standard{DynatempRange: ptr(-1.0)}, "dynatemp_range", ">= 0"},
		{plugins.Standard{DynatempExponent: ptr(-1.0)}, "dynatemp_exponent", ">= 0"},
	}
	for _, tt := range tests {
		err := tt.cfg.Check(10)
		var re *standard.RangeError
		require.ErrorAs(t, err, &re, tt.key)
		assert.Equal(t, standard.RangeError{Key: tt.key, Want: tt.want}, *re)
		assert.ErrorIs(t, err, standard.ErrConfig)
	}
	for _, bias := range []map[int32]float64{{10: 1}, {-1: 1}, {3: math.NaN()}} {
		err := plugins.Standard{LogitBias: bias}.Check(10)
		assert.ErrorIs(t, err, standard.ErrConfig, "%v", bias)
	}
}

// TestStopStringsConfig: the strings policy's limits, and its config.
func TestStopStringsConfig(t *testing.T) {
	assert.JSONEq(t, `{"stop":["a","\n\n"]}`, string(plugins.StopStrings{Stop: []string{"a", "\n\n"}}.Config()))
	assert.JSONEq(t, `{"stop":["x"],"include":true}`, string(plugins.StopStrings{Stop: []string{"x"}, Include: true}.Config()))
	long := string(make([]byte, plugins.MaxStopStringLen+1))
	for _, stops := range [][]string{{""}, {"a", long}, make([]string, plugins.MaxStopStrings+1)} {
		assert.ErrorIs(t, plugins.StopStrings{Stop: stops}.Check(), plugins.ErrStopStrings)
	}
	assert.NoError(t, plugins.StopStrings{Stop: []string{string(make([]byte, plugins.MaxStopStringLen))}}.Check())
}
