package plugins_test

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/engine/enginetest"
	"github.com/realizar-host/realizar-host/host"
	"github.com/realizar-host/realizar-host/internal/plugins"
	"github.com/realizar-host/realizar-host/internal/plugins/sampler/standard"
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

// TestConfigNumbers: a float the C builds cannot read exactly (past 10^22,
// or with more digits than 2^53 holds) never reaches them: Check refuses
// a magnitude outside the config numbers, naming the key, the range and
// the value as given, after the key's own range; Config writes at most 15
// significant digits (fewer below 1e-7), so every value Check takes is
// read by the C builds' init (here standard, dry and mirostat-v2).
func TestConfigNumbers(t *testing.T) {
	std := func(s plugins.Standard) func() error { return func() error { return s.Check(10) } }
	for _, tt := range []struct {
		name      string
		check     func() error
		key, want string
		got       string
	}{
		{"temperature 1e308", std(plugins.Standard{Temperature: ptr(1e308)}), "temperature", "0 or of magnitude in [1e-15, 1e+15]", "1e+308"},
		{"min_p tiny", std(plugins.Standard{MinP: ptr(1e-16)}), "min_p", "0 or of magnitude in [1e-15, 1e+15]", "1e-16"},
		{"top_p's own range first", std(plugins.Standard{TopP: ptr(1e308)}), "top_p", "in [0, 1]", "1e+308"},
		{"a float32 key as given", std(plugins.Standard{PresencePenalty: ptr(1e308)}), "presence_penalty", "in [-2, 2]", "1e+308"},
		{"repeat_penalty 1e308", std(plugins.Standard{RepeatPenalty: ptr(1e308)}), "repeat_penalty", "0 or of magnitude in [1e-15, 1e+15]", "1e+308"},
		{"mirostat_tau", std(plugins.Standard{MirostatTau: ptr(1e16)}), "mirostat_tau", "0 or of magnitude in [1e-15, 1e+15]", "1e+16"},
		{"logit_bias", std(plugins.Standard{LogitBias: map[int32]float64{5: -1e300}}), "logit_bias", "0 or of magnitude in [1e-15, 1e+15]", "-1e+300 (id 5)"},
		{"dry_multiplier", plugins.DRY{Multiplier: ptr(1e308)}.Check, "dry_multiplier", "0 or of magnitude in [1e-15, 1e+15]", "1e+308"},
		{"mirostat-v2 tau", plugins.MirostatV2{Tau: ptr(1e20)}.Check, "mirostat_tau", "0 or of magnitude in [1e-15, 1e+15]", "1e+20"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var re *standard.RangeError
			require.ErrorAs(t, tt.check(), &re)
			assert.Equal(t, tt.key, re.Key)
			assert.Equal(t, tt.want, re.Want)
			assert.Equal(t, tt.got, re.Got)
		})
	}

	tenth := 0.1 // not a constant: 0.1 + 0.2 is 0.30000000000000004 at run time
	assert.JSONEq(t, `{"temperature":0.3,"logit_bias":{"2":0.3}}`,
		string(plugins.Standard{Temperature: ptr(tenth + 0.2), LogitBias: map[int32]float64{2: tenth + 0.2}}.Config()), "15 digits")
	h := newHost(t, host.NewConfig())
	v := enginetest.NewTokenVocab(10, nil)
	// init runs at the first Reset: the C build refuses a number it cannot read there.
	initOK := func(name string, smp *host.Sampler, err error, cfg []byte) {
		t.Helper()
		require.NoError(t, err)
		defer smp.Close()
		require.NoError(t, smp.Reset(1, []int32{1}), "%s reads %s", name, cfg)
	}
	for _, x := range []float64{0, 1e-15, -1e-15, tenth * 1e-14, 1.23456789012345e-15,
		1.23456789012345e-9, -tenth * 7e-8, 1e-7, 1.23456789012345e-7, tenth + 0.2, tenth / 3, tenth * 7e-5, 123456.7890123456789,
		tenth * 1e16, 9.87654321098765e14, -tenth * 3e15} {
		a := math.Abs(x)
		s := plugins.Standard{Temperature: &a, DynatempRange: &a, MirostatEta: &a, RepeatPenalty: ptr(math.Max(a, 1e-7)),
			LogitBias: map[int32]float64{3: x}}
		require.NoError(t, s.Check(v.Size()), "%v", x)
		smp, err := host.NewSampler(v, load(t, h, "standard", string(s.Config())))
		initOK("standard", smp, err, s.Config())
		d := plugins.DRY{Multiplier: &a, Base: ptr(1 + a/2)}
		require.NoError(t, d.Check(), "%v", x)
		smp, err = host.NewSampler(v, load(t, h, "greedy", ""), load(t, h, "dry", string(d.Config())))
		initOK("dry", smp, err, d.Config())
		m := plugins.MirostatV2{Temperature: &a, Tau: &a, Eta: &a}
		require.NoError(t, m.Check(), "%v", x)
		smp, err = host.NewSampler(v, load(t, h, "mirostat-v2", string(m.Config())))
		initOK("mirostat-v2", smp, err, m.Config())
	}
}
