package plugins_test

import (
	"encoding/json"
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
		{plugins.Standard{TopNSigma: ptr(-0.5)}, "top_n_sigma", "-1 or >= 0 (-1 and 0 are off)"},
		{plugins.Standard{XTCThreshold: ptr(0.6)}, "xtc_threshold", "in [0, 0.5]"},
		{plugins.Standard{XTCProbability: ptr(-0.1)}, "xtc_probability", "in [0, 1]"},
		{plugins.Standard{DynatempRange: ptr(-1.0)}, "dynatemp_range", ">= 0"},
		{plugins.Standard{DynatempExponent: ptr(-1.0)}, "dynatemp_exponent", ">= 0"},
		{plugins.Standard{Mirostat: ptr(2)}, "mirostat", "0 or 1 (2 is the mirostat-v2 sampler)"},
		{plugins.Standard{Mirostat: ptr(1), MirostatTau: ptr(-1.0)}, "mirostat_tau", ">= 0"},
		{plugins.Standard{MirostatEta: ptr(-0.5)}, "mirostat_eta", ">= 0"},
	}
	for _, tt := range tests {
		err := tt.cfg.Check(10)
		var re *standard.RangeError
		require.ErrorAs(t, err, &re, tt.key)
		assert.Equal(t, tt.key, re.Key)
		assert.Equal(t, tt.want, re.Want)
		assert.NotEmpty(t, re.Got, tt.key)
		assert.ErrorIs(t, err, standard.ErrConfig)
	}
	var re *standard.RangeError
	require.ErrorAs(t, plugins.Standard{Temperature: ptr(-0.25)}.Check(10), &re)
	assert.Equal(t, "-0.25", re.Got, "the value refused")
	require.ErrorAs(t, plugins.Standard{RepeatPenalty: ptr(-1.1)}.Check(10), &re)
	assert.Equal(t, "-1.1", re.Got, "a float32 key's value as given")
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

// TestGrammarConfig: the grammar processor's keys (those its init reads),
// the schema compacted, and nil for a schema that is not JSON.
func TestGrammarConfig(t *testing.T) {
	tests := []struct {
		cfg  plugins.Grammar
		json string
	}{
		{plugins.Grammar{GBNF: `root ::= "a"`}, `{"grammar":"root ::= \"a\""}`},
		{plugins.Grammar{GBNF: `root ::= "a"`, Triggers: []string{"<tool_call>"}}, `{"grammar":"root ::= \"a\"","triggers":["\u003ctool_call\u003e"]}`},
		{plugins.Grammar{JSONSchema: json.RawMessage(`{ "type": "object" }`)}, `{"json_schema":{"type":"object"}}`},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.json, string(tt.cfg.Config()))
	}
	assert.Nil(t, plugins.Grammar{JSONSchema: json.RawMessage(`{`)}.Config())
}

// TestMirostatV2Config: the mirostat-v2 sampler's keys and ranges.
func TestMirostatV2Config(t *testing.T) {
	m := plugins.MirostatV2{Temperature: ptr(0.7), Eta: ptr(0.2)}
	require.NoError(t, m.Check())
	assert.JSONEq(t, `{"temperature":0.7,"mirostat_eta":0.2}`, string(m.Config()))
	for _, bad := range []plugins.MirostatV2{{Temperature: ptr(-1.0)}, {Tau: ptr(-0.5)}, {Eta: ptr(math.NaN())}} {
		var re *standard.RangeError
		require.ErrorAs(t, bad.Check(), &re)
		assert.NotEmpty(t, re.Got)
	}
}

// TestDRYConfig: the dry processor's keys, ranges and when it is on.
func TestDRYConfig(t *testing.T) {
	d := plugins.DRY{Multiplier: ptr(0.8), AllowedLength: ptr(3), SequenceBreakers: []string{"\n", "."}}
	require.NoError(t, d.Check())
	assert.True(t, d.On())
	assert.JSONEq(t, `{"dry_multiplier":0.8,"dry_allowed_length":3,"dry_sequence_breakers":["\n","."]}`, string(d.Config()))
	assert.JSONEq(t, `{"dry_multiplier":0,"dry_base":2}`, string(plugins.DRY{Base: ptr(2.0)}.Config()), "the processor's 0.8 is not llama.cpp's default")
	assert.False(t, plugins.DRY{Base: ptr(2.0)}.On(), "llama.cpp's default multiplier: off")
	assert.False(t, plugins.DRY{Multiplier: ptr(1.0), PenaltyLastN: ptr(0)}.On())
	assert.NoError(t, plugins.DRY{SequenceBreakers: []string{}}.Check(), "no breakers")
	for _, tt := range []struct {
		d   plugins.DRY
		key string
	}{
		{plugins.DRY{Multiplier: ptr(-1.0)}, "dry_multiplier"},
		{plugins.DRY{Base: ptr(0.5)}, "dry_base"},
		{plugins.DRY{AllowedLength: ptr(-1)}, "dry_allowed_length"},
		{plugins.DRY{PenaltyLastN: ptr(-2)}, "dry_penalty_last_n"},
		{plugins.DRY{SequenceBreakers: []string{"a", ""}}, "dry_sequence_breakers"},
		{plugins.DRY{SequenceBreakers: []string{string(make([]byte, plugins.MaxDRYBreakerLen+1))}}, "dry_sequence_breakers"},
		{plugins.DRY{SequenceBreakers: make([]string, plugins.MaxDRYBreakers+1)}, "dry_sequence_breakers"},
	} {
		var re *standard.RangeError
		require.ErrorAs(t, tt.d.Check(), &re, tt.key)
		assert.Equal(t, tt.key, re.Key)
	}
}
