package plugins

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"

	"github.com/realizar-host/realizar-host/internal/plugins/sampling"
)

// Names of the embedded plugins (Builtin's names).
const (
	GreedyBuiltin     = "greedy"      // sampler: argmax
	StandardBuiltin   = "standard"    // sampler: llama.cpp's chain; config Standard
	StringsBuiltin    = "strings"     // stop policy: stop strings; config StopStrings
	MirostatV2Builtin = "mirostat-v2" // sampler: Mirostat 2.0
	DRYBuiltin        = "dry"         // processor: llama.cpp's DRY penalty
	repetitionBuiltin = "repetition"  // stop policy: an n-gram loop
	maxTimeBuiltin    = "max-time"    // stop policy: a time budget
	JSONBuiltin       = "json"        // processor: JSON mode; config JSONMode
	GrammarBuiltin    = "grammar"     // processor (ABI 2): config {"grammar": GBNF} or {"json_schema": SCHEMA}
	LookupBuiltin     = "lookup"      // drafter (ABI 2): n-gram prompt lookup; config {"min_ngram", "max_ngram", "max_draft"}
)

// Standard, the config of the standard sampler, and its fields are
// generated from sampling.Params (standard_fields.go).

// The plugins' config numbers. The C builds read a number only where one
// IEEE operation gives it exactly (abi/guest/c's realizar_parse_f64: an
// integer of at most 2^53 times a power of ten within 10^±22) and refuse
// any other, so Config writes a float with at most ConfigDigits significant
// digits — fewer below 1e-7, as many as keep the power of ten within
// 10^-22 (8 at 1e-15) — and Check refuses one that is neither 0 nor of
// magnitude in [MinConfigMagnitude, MaxConfigMagnitude], where what Config
// writes always reads back. Integers are 32-bit, which the C builds read
// whole.
const (
	configDigits       = 15
	minConfigMagnitude = 1e-15
	maxConfigMagnitude = 1e15
)

// configNumberRange is the RangeError.Want of a float outside the config
// numbers.
var configNumberRange = fmt.Sprintf("0 or of magnitude in [%g, %g]", minConfigMagnitude, maxConfigMagnitude)

// configNumber reports whether v is 0 or of a magnitude the config numbers
// take.
func configNumber(v float64) bool {
	a := math.Abs(v)
	return a == 0 || a >= minConfigMagnitude && a <= maxConfigMagnitude
}

// formatNumber is v as Config writes it, a JSON number: at most
// ConfigDigits significant digits, and below 1e-7 no more than keep the
// last digit's power of ten at 10^-22 or above.
func formatNumber(v float64) json.Number {
	digits := configDigits
	if a := math.Abs(v); a != 0 && a < 1e-7 {
		lead := int(math.Floor(math.Log10(a))) // the first digit's power of ten
		digits = max(1, min(digits, lead+23))
	}
	return json.Number(strconv.FormatFloat(v, 'g', digits, 64))
}

// number is one numeric field of a config type: its key and value (one
// of f and i is set; nil when the field is not).
type number struct {
	key string
	f   *float64
	i   *int
}

// field is one numeric field of a config type, to set: its key and the
// field (one of f and i).
type field struct {
	key string
	f   **float64
	i   **int
}

// numbersOf are the values of fs.
func numbersOf(fs []field) []number {
	ns := make([]number, len(fs))
	for j, x := range fs {
		ns[j].key = x.key
		if x.f != nil {
			ns[j].f = *x.f
		} else {
			ns[j].i = *x.i
		}
	}
	return ns
}

// setNumber sets the field of key in fs to v (an integer field to int(v));
// false when fs has no such key.
func setNumber(fs []field, key string, v float64) bool {
	for _, x := range fs {
		if x.key != key {
			continue
		}
		if x.f != nil {
			*x.f = &v
		} else {
			n := int(v)
			*x.i = &n
		}
		return true
	}
	return false
}

func (s Standard) numbers() []number { return numbersOf(s.fields()) }

// SetNumber sets the number parameter key (a sampling.Params key the
// standard sampler reads) to v, an integer parameter to int(v); false for
// a key that is not one.
func (s *Standard) SetNumber(key string, v float64) bool { return setNumber(s.fields(), key, v) }

// Check refuses a value outside the sampler's ranges (see Standard;
// sampling.Params declares them) for a vocabulary of nVocab ids, then one
// outside the config numbers. A value out of range is a
// *sampling.RangeError naming the key and the value as given; a samplers
// entry the sampler refuses is a *sampling.SamplerError; every error wraps
// sampling.ErrConfig.
func (s Standard) Check(nVocab int) error {
	ns := s.numbers()
	if err := checkNumbers(ns); err != nil {
		return err
	}
	for id, v := range s.LogitBias {
		if math.IsNaN(v) || math.IsInf(v, 1) {
			return errors.Join(sampling.ErrConfig, fmt.Errorf("logit_bias[%d] is %v", id, v))
		}
	}
	if err := checkRanges(ns); err != nil {
		return err
	}
	if _, err := sampling.Stages(s.Samplers); err != nil {
		return err
	}
	if nVocab <= 0 {
		return errors.Join(sampling.ErrConfig, errors.New("empty vocabulary"))
	}
	for _, id := range slices.Sorted(maps.Keys(s.LogitBias)) {
		if id < 0 || int(id) >= nVocab {
			return errors.Join(sampling.ErrConfig, errors.New("logit_bias id "+strconv.Itoa(int(id))+" outside the vocabulary, or a NaN bias"))
		}
	}
	if err := checkMagnitudes(ns); err != nil {
		return err
	}
	for id, v := range s.LogitBias {
		if !math.IsInf(v, -1) && !configNumber(v) {
			return &sampling.RangeError{Key: "logit_bias", Want: configNumberRange,
				Got: fmt.Sprintf("%s (id %d)", strconv.FormatFloat(v, 'g', -1, 64), id)}
		}
	}
	return nil
}

// checkRanges refuses a set number outside its sampling.Params range with
// a *sampling.RangeError giving the value as set.
func checkRanges(ns []number) error {
	for _, n := range ns {
		p, ok := sampling.Lookup(n.key)
		if !ok || (n.f == nil && n.i == nil) {
			continue
		}
		v := 0.0
		if n.f != nil {
			v = *n.f
		} else {
			v = float64(*n.i)
		}
		if err := p.Check(v); err != nil {
			var re *sampling.RangeError
			if errors.As(err, &re) {
				re.Got = n.String()
			}
			return err
		}
	}
	return nil
}

// String is n's value as text ("" when unset).
func (n number) String() string {
	switch {
	case n.f != nil:
		return strconv.FormatFloat(*n.f, 'g', -1, 64)
	case n.i != nil:
		return strconv.Itoa(*n.i)
	}
	return ""
}

// checkMagnitudes refuses a float outside the config numbers with a
// *sampling.RangeError; run it after the keys' own ranges, whose message
// says more.
func checkMagnitudes(ns []number) error {
	for _, n := range ns {
		if n.f != nil && !configNumber(*n.f) {
			return &sampling.RangeError{Key: n.key, Want: configNumberRange, Got: n.String()}
		}
	}
	return nil
}

// checkNumbers refuses a number that is not finite, or an integer
// outside int32, with a *sampling.RangeError.
func checkNumbers(ns []number) error {
	for _, n := range ns {
		switch {
		case n.f != nil && (math.IsNaN(*n.f) || math.IsInf(*n.f, 0)):
			return &sampling.RangeError{Key: n.key, Want: "a finite number", Got: strconv.FormatFloat(*n.f, 'g', -1, 64)}
		case n.i != nil && (*n.i < math.MinInt32 || *n.i > math.MaxInt32):
			return &sampling.RangeError{Key: n.key, Want: "a 32-bit integer", Got: strconv.Itoa(*n.i)}
		}
	}
	return nil
}

// numbersJSON are the set numbers of ns, by key, floats as formatNumber
// writes them (a non-finite one left out).
func numbersJSON(ns []number) map[string]any {
	obj := map[string]any{}
	for _, n := range ns {
		switch {
		case n.f != nil && !math.IsNaN(*n.f) && !math.IsInf(*n.f, 0):
			obj[n.key] = formatNumber(*n.f)
		case n.i != nil:
			obj[n.key] = *n.i
		}
	}
	return obj
}

// Config is s as the sampler's JSON config: the fields that are set ({}
// for none). A value Check refuses as not finite is left out: check first.
func (s Standard) Config() json.RawMessage {
	obj := numbersJSON(s.numbers())
	if len(s.LogitBias) > 0 {
		bias := map[string]any{}
		for id, v := range s.LogitBias {
			switch {
			case math.IsInf(v, -1):
				bias[strconv.Itoa(int(id))] = false
			case !math.IsNaN(v) && !math.IsInf(v, 1):
				bias[strconv.Itoa(int(id))] = formatNumber(v)
			}
		}
		obj["logit_bias"] = bias
	}
	if s.Samplers != nil {
		obj["samplers"] = s.Samplers
	}
	b, _ := json.Marshal(obj) // finite numbers and bools always marshal
	return b
}

// MirostatV2 is the config of the mirostat-v2 sampler (MirostatV2Builtin,
// plugins/sampler/mirostat): llama.cpp's mirostat 2, Mirostat 2.0 after a
// temperature. A nil field keeps the sampler's default; the ranges are
// Standard's for the same keys.
type MirostatV2 struct {
	Temperature *float64 // "temperature", default 0.8, >= 0 (0: the argmax)
	Tau         *float64 // "mirostat_tau", default 5 (bits), >= 0
	Eta         *float64 // "mirostat_eta", default 0.1, >= 0
}

// MirostatV2Of is the mirostat-v2 sampler's config for the standard
// sampler's s with mirostat 2: its temperature, mirostat_tau and
// mirostat_eta, the only parameters llama.cpp's Mirostat 2 reads.
func MirostatV2Of(s Standard) MirostatV2 {
	return MirostatV2{Temperature: s.Temperature, Tau: s.MirostatTau, Eta: s.MirostatEta}
}

func (m *MirostatV2) fields() []field {
	return []field{{key: "temperature", f: &m.Temperature}, {key: "mirostat_tau", f: &m.Tau}, {key: "mirostat_eta", f: &m.Eta}}
}

func (m MirostatV2) numbers() []number { return numbersOf(m.fields()) }

// setNumber sets the number parameter key (temperature, mirostat_tau or
// mirostat_eta) to v; false for another key.
func (m *MirostatV2) setNumber(key string, v float64) bool { return setNumber(m.fields(), key, v) }

// Check refuses a value out of range, or outside the config numbers, with
// a *sampling.RangeError naming the key and the value.
func (m MirostatV2) Check() error {
	if err := checkNumbers(m.numbers()); err != nil {
		return err
	}
	if err := checkRanges(m.numbers()); err != nil {
		return err
	}
	return checkMagnitudes(m.numbers())
}

// Config is m as the sampler's JSON config: the fields that are set.
func (m MirostatV2) Config() json.RawMessage {
	b, _ := json.Marshal(numbersJSON(m.numbers())) // finite numbers always marshal
	return b
}

// Limits of the dry processor's sequence breakers (plugins/processor/dry;
// llama.cpp truncates a longer breaker to 40 bytes).
const (
	MaxDRYBreakers   = 64 // breakers at most
	MaxDRYBreakerLen = 40 // bytes in one breaker at most
)

// DRY is the config of the dry processor (DRYBuiltin), llama.cpp's DRY
// repetition penalty in its server's names. A nil field keeps llama.cpp's
// default (and the processor's): multiplier 0 (off; the processor's own
// default, when loaded by name, is 0.8), base 1.75, allowed length 2,
// penalty window 64, breakers "\n", ":", "\"", "*".
type DRY struct {
	Multiplier    *float64 // "dry_multiplier", >= 0; 0 is off
	Base          *float64 // "dry_base", >= 1 (llama.cpp's server takes less as its default; refused here)
	AllowedLength *int     // "dry_allowed_length", >= 0
	PenaltyLastN  *int     // "dry_penalty_last_n", >= -1 (-1: the whole context; 0 is off)
	// SequenceBreakers end a repeat: at most MaxDRYBreakers strings of 1
	// to MaxDRYBreakerLen bytes (nil: the default; empty: none, as
	// llama.cpp's --dry-sequence-breaker none). "dry_sequence_breakers".
	SequenceBreakers []string
}

func (d *DRY) fields() []field {
	return []field{{key: "dry_multiplier", f: &d.Multiplier}, {key: "dry_base", f: &d.Base},
		{key: "dry_allowed_length", i: &d.AllowedLength}, {key: "dry_penalty_last_n", i: &d.PenaltyLastN}}
}

func (d DRY) numbers() []number { return numbersOf(d.fields()) }

// SetNumber sets the number parameter key (one of the dry processor's
// sampling.Params) to v, an integer parameter to int(v); false for
// another key.
func (d *DRY) SetNumber(key string, v float64) bool { return setNumber(d.fields(), key, v) }

// Check refuses a value out of range, or outside the config numbers, with
// a *sampling.RangeError naming the key and the value.
func (d DRY) Check() error {
	if err := checkNumbers(d.numbers()); err != nil {
		return err
	}
	if err := checkRanges(d.numbers()); err != nil {
		return err
	}
	switch {
	case len(d.SequenceBreakers) > MaxDRYBreakers:
		return &sampling.RangeError{Key: "dry_sequence_breakers", Want: fmt.Sprintf("at most %d strings", MaxDRYBreakers),
			Got: strconv.Itoa(len(d.SequenceBreakers)) + " strings"}
	}
	for i, b := range d.SequenceBreakers {
		if len(b) == 0 || len(b) > MaxDRYBreakerLen {
			return &sampling.RangeError{Key: "dry_sequence_breakers", Want: fmt.Sprintf("strings of 1 to %d bytes", MaxDRYBreakerLen),
				Got: fmt.Sprintf("%d bytes (entry %d)", len(b), i)}
		}
	}
	return checkMagnitudes(d.numbers())
}

// On reports whether d asks for DRY: a multiplier above 0 and a window
// that is not 0 (llama.cpp's condition; the base is >= 1 once checked).
func (d DRY) On() bool {
	return d.Multiplier != nil && *d.Multiplier > 0 && (d.PenaltyLastN == nil || *d.PenaltyLastN != 0)
}

// Runs reports whether llama.cpp's common sampler runs DRY with d: d is
// On, Mirostat is off (mirostat 0), and the order samplers (nil: the
// default) lists dry. The server and the CLI load the dry processor only
// then.
func (d DRY) Runs(mirostat int, samplers []string) bool {
	return d.On() && mirostat == 0 && sampling.ListsDRY(samplers)
}

// Config is d as the processor's JSON config: the fields that are set,
// and the multiplier always (0 when nil: the processor's own default is
// 0.8).
func (d DRY) Config() json.RawMessage {
	obj := numbersJSON(d.numbers())
	if d.Multiplier == nil {
		obj["dry_multiplier"] = 0
	}
	if d.SequenceBreakers != nil {
		obj["dry_sequence_breakers"] = d.SequenceBreakers
	}
	b, _ := json.Marshal(obj) // finite numbers and strings always marshal
	return b
}

// Limits of the strings stop policy (plugins/stop/strings).
const (
	MaxStopStrings   = 64   // stop strings at most
	MaxStopStringLen = 1024 // bytes in one stop string at most
)

// ErrStopStrings wraps StopStrings.Check's errors.
var ErrStopStrings = errors.New("plugins: bad stop strings")

// StopStrings is the config of the strings stop policy (StringsBuiltin,
// plugins/stop/strings): the turn stops where the generated text first
// holds one of Stop, and the string and what follows it are trimmed from
// the output (with Include, only what follows).
type StopStrings struct {
	Stop    []string `json:"stop"`
	Include bool     `json:"include,omitempty"`
}

// Check refuses more than MaxStopStrings strings, or an empty one or one
// over MaxStopStringLen bytes, with an error wrapping ErrStopStrings that
// gives the string's index.
func (s StopStrings) Check() error {
	if len(s.Stop) > MaxStopStrings {
		return fmt.Errorf("%w: %d stop strings, at most %d", ErrStopStrings, len(s.Stop), MaxStopStrings)
	}
	for i, st := range s.Stop {
		if n := len(st); n == 0 || n > MaxStopStringLen {
			return fmt.Errorf("%w: stop string %d is %d bytes, must be 1 to %d", ErrStopStrings, i, n, MaxStopStringLen)
		}
	}
	return nil
}

// Config is s as the policy's JSON config.
func (s StopStrings) Config() json.RawMessage {
	if s.Stop == nil {
		s.Stop = []string{}
	}
	b, _ := json.Marshal(s) // strings and a bool always marshal
	return b
}

// ParseSamplers reads a request's samplers value: a JSON list of strings,
// or a JSON string of names separated by ';' (llama.cpp's --samplers; not
// its server's string of sampler characters). The names are checked by
// Standard.Check; a value of another shape is an error wrapping
// sampling.ErrConfig.
func ParseSamplers(raw json.RawMessage) ([]string, error) {
	var names []string
	if err := json.Unmarshal(raw, &names); err == nil && names != nil {
		return names, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("%w: samplers must be a list of names or a \";\"-separated string", sampling.ErrConfig)
	}
	return sampling.ParseSamplers([]byte(s))
}
