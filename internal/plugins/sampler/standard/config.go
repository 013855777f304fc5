package standard

import (
	"errors"
	"math"
	"strconv"

	"github.com/realizar-host/realizar-host/abi/guest"
	"github.com/realizar-host/realizar-host/internal/plugins/sampling"
)

// Config is the standard sampler's configuration. Its JSON keys are the
// OpenAI / llama.cpp names; every key is optional.
type Config struct {
	// Temperature divides the logits before the final draw; 0 means
	// greedy (the first candidate after bias and penalties, no draw).
	// Key "temperature", default 0.8, >= 0.
	Temperature float64
	// TopK keeps the k best candidates; 0 disables it. Key "top_k", default 40.
	TopK int
	// TopP keeps the smallest prefix whose probability reaches it; 1
	// disables it. Key "top_p", default 0.95.
	TopP float64
	// MinP drops candidates whose probability is below MinP times the
	// best's; 0 disables it. Key "min_p", default 0.05.
	MinP float64
	// TypicalP is locally typical sampling's mass; 1 disables it. Key
	// "typical_p", default 1.0.
	TypicalP float64
	// RepeatPenalty divides a positive logit (multiplies a non-positive one)
	// of every id in the window, once per distinct id; 1 disables it. Key
	// "repeat_penalty", default 1.0 (llama.cpp's default).
	RepeatPenalty float32
	// PresencePenalty is subtracted once from the logit of every id in the
	// window. Key "presence_penalty", default 0, in [-2, 2].
	PresencePenalty float32
	// FrequencyPenalty times the id's count in the window is subtracted from
	// its logit. Key "frequency_penalty", default 0, in [-2, 2].
	FrequencyPenalty float32
	// RepeatLastN is the window: the last RepeatLastN tokens of prompt plus
	// output; 0 disables the penalties, -1 means the whole context. Key
	// "repeat_last_n", default 64.
	RepeatLastN int
	// TopNSigma keeps the candidates whose logit is at least the maximum
	// minus TopNSigma standard deviations of the logits (mean and deviation
	// over every finite or +Inf logit, after bias and penalties, before
	// top-k); <= 0 disables it (0, or -1 as llama.cpp spells off; other
	// negative values are refused). Key "top_n_sigma", default 0.
	TopNSigma float64
	// XTCProbability is the chance that XTC (exclude top choices) runs at a
	// step: it then drops every candidate but the least likely of those at
	// or above XTCThreshold, after min-p. 0 disables it. Key
	// "xtc_probability", default 0, in [0, 1].
	XTCProbability float64
	// XTCThreshold is XTC's probability threshold. Key "xtc_threshold",
	// default 0.1, in [0, 0.5] (llama.cpp takes above 0.5 as off).
	XTCThreshold float64
	// DynatempRange makes the temperature dynamic: Temperature ± range,
	// chosen by the entropy of the candidates before the draw. 0 disables
	// it. Key "dynatemp_range", default 0, >= 0.
	DynatempRange float64
	// DynatempExponent maps the normalized entropy to the range
	// (temperature = min + (max-min)·entropy^exponent). Key
	// "dynatemp_exponent", default 1, >= 0.
	DynatempExponent float64
	// Mirostat 1 replaces the chain after the logit bias with llama.cpp's
	// Mirostat (v1; Basu et al. 2021, algorithm 1) at Temperature: the
	// penalties, the filter stages, the dynamic temperature and the
	// samplers order do not run, as in llama.cpp (their values are still
	// checked). 0 is off. Key "mirostat", default 0, 0 or 1 (llama.cpp's
	// 2 is the mirostat-v2 sampler).
	Mirostat int
	// MirostatTau is Mirostat's target surprise, in bits; mu starts each
	// turn at 2·tau. Key "mirostat_tau", default 5, >= 0.
	MirostatTau float64
	// MirostatEta is Mirostat's learning rate. Key "mirostat_eta",
	// default 0.1, >= 0.
	MirostatEta float64
	// Samplers is the chain's order, llama.cpp's samplers: stage names
	// (see ParseSamplers and the README's sampler table), each stage run
	// in the order given; a stage not listed does not run (temperature not
	// listed: the draw is at T = 1). dry is accepted and ignored here: the
	// dry processor, when loaded, runs before the sampler. penalties, when
	// listed, comes first (dry aside). nil is sampling.DefaultSamplers. Key
	// "samplers": a list of names or a ";"-separated string.
	Samplers []string
	// LogitBias is added to the logits of its ids before anything else (in
	// order; several entries for one id add up). Key "logit_bias":
	// {"id": bias, ...} or [[id, bias], ...]; a bias of false is -Inf.
	LogitBias []Bias
}

// Bias is one logit_bias entry.
type Bias struct {
	ID    int32
	Value float32
}

// DefaultConfig is llama.cpp's default sampling parameters (the
// sampling.Params table's defaults).
func DefaultConfig() Config {
	var c Config
	for _, p := range sampling.Of(sampling.Standard) {
		c.set(p.Key, p.Default)
	}
	return c
}

// set sets c's number of key to v (nothing for a key that is not one).
func (c *Config) set(key string, v float64) {
	switch f64, f32, i := c.field(key); {
	case f64 != nil:
		*f64 = v
	case f32 != nil:
		*f32 = float32(v)
	case i != nil:
		*i = int(v)
	}
}

// field is c's field of the number parameter key: one of f64, f32 and i
// as the parameter's sampling.Type; none for another key. (The one place
// the config keys meet the fields; TestFieldsMatchParams checks it against
// sampling.Params.)
func (c *Config) field(key string) (f64 *float64, f32 *float32, i *int) {
	switch key {
	case "temperature":
		return &c.Temperature, nil, nil
	case "top_k":
		return nil, nil, &c.TopK
	case "top_p":
		return &c.TopP, nil, nil
	case "min_p":
		return &c.MinP, nil, nil
	case "typical_p":
		return &c.TypicalP, nil, nil
	case "repeat_penalty":
		return nil, &c.RepeatPenalty, nil
	case "repeat_last_n":
		return nil, nil, &c.RepeatLastN
	case "presence_penalty":
		return nil, &c.PresencePenalty, nil
	case "frequency_penalty":
		return nil, &c.FrequencyPenalty, nil
	case "top_n_sigma":
		return &c.TopNSigma, nil, nil
	case "xtc_probability":
		return &c.XTCProbability, nil, nil
	case "xtc_threshold":
		return &c.XTCThreshold, nil, nil
	case "dynatemp_range":
		return &c.DynatempRange, nil, nil
	case "dynatemp_exponent":
		return &c.DynatempExponent, nil, nil
	case "mirostat":
		return nil, nil, &c.Mirostat
	case "mirostat_tau":
		return &c.MirostatTau, nil, nil
	case "mirostat_eta":
		return &c.MirostatEta, nil, nil
	}
	return nil, nil, nil
}

// value is c's number of key as a float64.
func (c *Config) value(key string) float64 {
	switch f64, f32, i := c.field(key); {
	case f64 != nil:
		return *f64
	case f32 != nil:
		return float64(*f32)
	case i != nil:
		return float64(*i)
	}
	return 0
}

// ErrConfig wraps every configuration error (sampling.ErrConfig).
var ErrConfig = sampling.ErrConfig

// keys are the config keys, in the order the messages list them (the C
// build has the same list): sampling.Keys(sampling.Standard). ReadConfig
// and ParseConfig refuse any other.
var keys = sampling.Keys(sampling.Standard)

// CheckKeys refuses a raw config JSON with a key not in Keys; the error
// wraps ErrConfig and guest.ErrConfig and names the key.
func CheckKeys(raw []byte) error {
	if err := guest.CheckKeys(raw, keys...); err != nil {
		return errors.Join(ErrConfig, err)
	}
	return nil
}

// RangeError is a config value outside its range (sampling.RangeError).
type RangeError = sampling.RangeError

// Check refuses values out of range with a *RangeError naming the key:
// each number outside its sampling.Params range (temperature < 0, 0 is
// greedy; top_k < 0; top_p, min_p or typical_p outside [0, 1]; ...). A
// samplers entry that is unknown, not offered (infill, adaptive_p), listed
// twice, or penalties after a stage but dry is a *SamplerError. A
// logit_bias id outside [0, nVocab) or a NaN bias, and nVocab <= 0, are
// errors wrapping ErrConfig. These are the ranges the C build refuses, and
// the ones the server and the CLI check before loading it
// (plugins.Standard).
func (c Config) Check(nVocab int) error {
	for _, p := range sampling.Of(sampling.Standard) {
		if p.Number() {
			if err := p.Check(c.value(p.Key)); err != nil {
				return err
			}
		}
	}
	if _, err := stages(c.Samplers); err != nil {
		return err
	}
	if nVocab <= 0 {
		return errors.Join(ErrConfig, errors.New("empty vocabulary"))
	}
	for _, b := range c.LogitBias {
		if b.ID < 0 || int(b.ID) >= nVocab || b.Value != b.Value {
			return errors.Join(ErrConfig, errors.New("logit_bias id "+strconv.Itoa(int(b.ID))+" outside the vocabulary, or a NaN bias"))
		}
	}
	return nil
}

// ReadConfig reads the plugin's config through the host (guest.ConfigRaw)
// over DefaultConfig.
func ReadConfig() (Config, error) { return readConfig(guest.ConfigRaw) }

// readConfig reads every key through get (config_get's answers).
func readConfig(get func(string) ([]byte, bool)) (Config, error) {
	c := DefaultConfig()
	num := func(key string, dst *float64) (bool, error) {
		raw, ok := get(key)
		if !ok {
			return false, nil
		}
		v, err := strconv.ParseFloat(string(raw), 64)
		if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
			return true, errors.Join(ErrConfig, errors.New(key+" is not a number"))
		}
		*dst = v
		return true, nil
	}
	for _, p := range sampling.Of(sampling.Standard) {
		if !p.Number() {
			continue
		}
		var f float64
		ok, err := num(p.Key, &f)
		if err != nil {
			return c, err
		}
		if !ok {
			continue
		}
		if p.Type == sampling.Int && (f != math.Trunc(f) || f < math.MinInt32 || f > math.MaxInt32) {
			return c, errors.Join(ErrConfig, errors.New(p.Key+" is not an integer"))
		}
		c.set(p.Key, f)
	}
	if raw, ok := get("samplers"); ok {
		names, err := parseSamplers(raw)
		if err != nil {
			return c, err
		}
		c.Samplers = names
	}
	if raw, ok := get("logit_bias"); ok {
		bias, err := parseLogitBias(raw)
		if err != nil {
			return c, err
		}
		c.LogitBias = bias
	}
	return c, nil
}

// ParseLogitBias reads {"id": bias, ...} or [[id, bias], ...] in order; a
// bias of false is -Inf; ids are decimal integers. (The C build has the
// same scanner.)
func parseLogitBias(s []byte) ([]Bias, error) {
	bad := errors.Join(ErrConfig, errors.New(`logit_bias must be {"id": bias, ...} or [[id, bias], ...]`))
	i := guest.SkipSpace(s, 0)
	if i >= len(s) || (s[i] != '{' && s[i] != '[') {
		return nil, bad
	}
	obj := s[i] == '{'
	closer := byte(']')
	if obj {
		closer = '}'
	}
	out := []Bias{}
	i = guest.SkipSpace(s, i+1)
	if i < len(s) && s[i] == closer {
		if guest.SkipSpace(s, i+1) != len(s) {
			return nil, bad
		}
		return out, nil
	}
	for {
		var id int32
		var v float32
		var ok bool
		if obj {
			var key string
			if key, i, ok = guest.ParseString(s, i); !ok {
				return nil, bad
			}
			if id, ok = tokenID([]byte(key)); !ok {
				return nil, bad
			}
			i = guest.SkipSpace(s, i)
			if i >= len(s) || s[i] != ':' {
				return nil, bad
			}
			if v, i, ok = biasValue(s, guest.SkipSpace(s, i+1)); !ok {
				return nil, bad
			}
		} else {
			if i >= len(s) || s[i] != '[' {
				return nil, bad
			}
			i = guest.SkipSpace(s, i+1)
			j := i
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			if id, ok = tokenID(s[i:j]); !ok {
				return nil, bad
			}
			i = guest.SkipSpace(s, j)
			if i >= len(s) || s[i] != ',' {
				return nil, bad
			}
			if v, i, ok = biasValue(s, guest.SkipSpace(s, i+1)); !ok {
				return nil, bad
			}
			i = guest.SkipSpace(s, i)
			if i >= len(s) || s[i] != ']' {
				return nil, bad
			}
			i++
		}
		out = append(out, Bias{id, v})
		i = guest.SkipSpace(s, i)
		switch {
		case i < len(s) && s[i] == ',':
			i = guest.SkipSpace(s, i+1)
		case i < len(s) && s[i] == closer:
			if guest.SkipSpace(s, i+1) != len(s) {
				return nil, bad
			}
			return out, nil
		default:
			return nil, bad
		}
	}
}

// tokenID reads a decimal id of at most 10 digits.
func tokenID(s []byte) (int32, bool) {
	if len(s) == 0 || len(s) > 10 {
		return 0, false
	}
	v, err := strconv.ParseUint(string(s), 10, 31)
	return int32(v), err == nil
}

// biasValue reads a number or false (-Inf) at s[i].
func biasValue(s []byte, i int) (float32, int, bool) {
	if i+5 <= len(s) && string(s[i:i+5]) == "false" {
		return float32(math.Inf(-1)), i + 5, true
	}
	j := i
	for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '-' || s[j] == '+' || s[j] == '.' || s[j] == 'e' || s[j] == 'E') {
		j++
	}
	v, err := strconv.ParseFloat(string(s[i:j]), 64)
	if j == i || err != nil {
		return 0, i, false
	}
	return float32(v), j, true
}
