// Package sampling declares the sampling parameters once: the table
// Params gives each one's config key (which is also the server's request
// field), its llama.cpp and OpenAI names, type, range, the CLI's and the
// server's defaults, the CLI flag, and the stage and plugin that read it.
// The standard sampler's checks and reads (plugins/sampler/standard), the
// host's config types (plugins.Standard, plugins.DRY, plugins.MirostatV2),
// the server's request fields, the CLI's flags and the README's table are
// derived from it or checked against it by tests.
//
// The package is a leaf with no project imports, so guests (the Go build
// of the standard sampler) and the host share it; the C build keeps its
// own copy of the ranges and names, checked against this one by the
// plugins tests.
package sampling

import (
	"math"
	"strconv"
	"strings"
)

// Type is what a parameter's value is.
type Type int

// The parameter types.
const (
	Float   Type = iota // a number, read as a float64
	Float32             // a number the sampler reads as a float32 (its range is checked after the rounding)
	Int                 // an integer in int32
	Order               // samplers: a list of stage names, or a ";"-separated string
	Bias                // logit_bias: {"id": bias, ...}; a bias of false is -Inf
	Strings             // a list of strings
	Seed                // seed: a 64-bit integer (the server's an int64, taken as its two's-complement bits; the CLI's a uint64)
)

// String is t's name in the README's table.
func (t Type) String() string {
	switch t {
	case Float, Float32:
		return "number"
	case Int:
		return "integer"
	case Order:
		return "list of names, or a string"
	case Bias:
		return "object {id: bias}"
	case Strings:
		return "list of strings"
	case Seed:
		return "integer (64 bits)"
	}
	return "Type(" + strconv.Itoa(int(t)) + ")"
}

// What reads the parameters: plugins by their builtin names, or the host.
const (
	Standard = "standard" // the standard sampler (plugins/sampler/standard)
	DRY      = "dry"      // the dry processor (plugins/processor/dry)
	// Host is the host itself: the seed of the turn's RNG, which every
	// plugin's realizar_reset receives (abi/ABI.md).
	Host = "host"
)

// Range is a number's range: [Min, Max], open at Min when MinOpen, plus
// the values in Also. Note follows the range in messages.
type Range struct {
	Min, Max float64
	MinOpen  bool
	Also     []float64
	Note     string
}

// Contains reports whether v is in r.
func (r Range) Contains(v float64) bool {
	for _, a := range r.Also {
		if v == a {
			return true
		}
	}
	if r.MinOpen && v <= r.Min || v < r.Min {
		return false
	}
	return v <= r.Max
}

// want is r as messages say it: "in [0, 1]", ">= 0", "> 0", "0 or 1",
// "-1 or >= 0 (-1 and 0 are off)". integer says the values are integers
// (a range of two is then "A or B").
func (r Range) want(integer bool) string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	var s string
	switch {
	case math.IsInf(r.Max, 1) && r.MinOpen:
		s = "> " + f(r.Min)
	case math.IsInf(r.Max, 1):
		s = ">= " + f(r.Min)
	case integer && r.Max-r.Min == 1:
		s = f(r.Min) + " or " + f(r.Max)
	default:
		s = "in [" + f(r.Min) + ", " + f(r.Max) + "]"
	}
	for i := len(r.Also) - 1; i >= 0; i-- {
		s = f(r.Also[i]) + " or " + s
	}
	if r.Note != "" {
		s += " (" + r.Note + ")"
	}
	return s
}

// Param is one sampling parameter.
type Param struct {
	// Key is the config key of the plugin that reads it and the server's
	// request field: llama.cpp's server name, OpenAI's where OpenAI has
	// the parameter.
	Key string
	// OpenAI says OpenAI's API has the field (under Key).
	OpenAI bool
	// LlamaCpp is llama.cpp's CLI flag for it ("--top-p").
	LlamaCpp string
	Type     Type
	// Range is a number's range (the plugin's, which the server and the
	// CLI check before loading it); unused for the other types.
	Range Range
	// Default is the plugin's default: llama.cpp's, the CLI's and
	// --sampler-config's. A number for Float, Float32 and Int; for the
	// other types it is written in DefaultText.
	Default     float64
	DefaultText string
	// Server is the server's default for a request without the field
	// where it differs from Default: OpenAI's (temperature 1, no top-k,
	// top-p or min-p). nil: Default.
	Server *float64
	// Flag is the CLI flag, without its dashes ("top-p"); llama.cpp's
	// name in every case but --dynatemp-exp, --mirostat-ent and
	// --mirostat-lr (llama.cpp's too), and "" where there is none.
	Flag string
	// Stage is the stage that reads it, by its samplers name ("top_p"),
	// or "logit bias", "mirostat", "order" or "draw" (the seed) for the
	// parameters outside the stages.
	Stage string
	// Plugin is the plugin whose config key it is (Standard or DRY; the
	// mirostat-v2 sampler reads Standard's temperature, mirostat_tau and
	// mirostat_eta too), or Host for the seed, which is no plugin's key.
	Plugin string
	// Usage is the CLI flag's help and the README's note.
	Usage string
}

// ServerDefault is the server's default for p: Server, or Default.
func (p Param) ServerDefault() float64 {
	if p.Server != nil {
		return *p.Server
	}
	return p.Default
}

func num(v float64) *float64 { return &v }

// Number reports whether p's value is a number (Float, Float32 or Int).
func (p Param) Number() bool { return p.Type == Float || p.Type == Float32 || p.Type == Int }

// Want is p's range as messages say it.
func (p Param) Want() string { return p.Range.want(p.Type == Int) }

// Check refuses a number outside p's range with a *RangeError naming the
// key and the value as given; a Float32 is checked as the sampler reads
// it (rounded to float32).
func (p Param) Check(v float64) error {
	r := v
	if p.Type == Float32 {
		r = float64(float32(v))
	}
	if p.Range.Contains(r) {
		return nil
	}
	bits := 64
	if p.Type == Float32 && r == v {
		bits = 32 // a float32's shortest text ("2.1", not its float64 digits)
	}
	return &RangeError{Key: p.Key, Want: p.Want(), Got: strconv.FormatFloat(v, 'g', -1, bits)}
}

var inf = math.Inf(1)

// Ranges used by several rows.
var (
	unit     = Range{Min: 0, Max: 1}
	nonNeg   = Range{Min: 0, Max: inf}
	window   = Range{Min: -1, Max: inf}
	penalty  = Range{Min: -2, Max: 2}
	positive = Range{Min: 0, Max: inf, MinOpen: true}
)

// Params are the sampling parameters, each declared once: the standard
// sampler's in the order its messages list its keys (the C build's
// order), then the dry processor's, then the host's seed.
var Params = []Param{
	{Key: "temperature", OpenAI: true, LlamaCpp: "--temp", Type: Float, Range: nonNeg, Default: 0.8, Server: num(1),
		Flag: "temperature", Stage: "temperature", Plugin: Standard, Usage: "temperature (0 is greedy)"},
	{Key: "top_k", LlamaCpp: "--top-k", Type: Int, Range: nonNeg, Default: 40, Server: num(0),
		Flag: "top-k", Stage: "top_k", Plugin: Standard, Usage: "keep the K most likely tokens (0: all)"},
	{Key: "top_p", OpenAI: true, LlamaCpp: "--top-p", Type: Float, Range: unit, Default: 0.95, Server: num(1),
		Flag: "top-p", Stage: "top_p", Plugin: Standard, Usage: "nucleus probability mass (1: off)"},
	{Key: "min_p", LlamaCpp: "--min-p", Type: Float, Range: unit, Default: 0.05, Server: num(0),
		Flag: "min-p", Stage: "min_p", Plugin: Standard, Usage: "drop tokens below min-p × the top probability (0: off)"},
	{Key: "typical_p", LlamaCpp: "--typical", Type: Float, Range: unit, Default: 1,
		Flag: "typical-p", Stage: "typ_p", Plugin: Standard, Usage: "locally typical sampling mass (1: off)"},
	{Key: "repeat_penalty", LlamaCpp: "--repeat-penalty", Type: Float32, Range: positive, Default: 1,
		Flag: "repeat-penalty", Stage: "penalties", Plugin: Standard, Usage: "repetition penalty (1: off)"},
	{Key: "repeat_last_n", LlamaCpp: "--repeat-last-n", Type: Int, Range: window, Default: 64,
		Flag: "repeat-last-n", Stage: "penalties", Plugin: Standard, Usage: "tokens the penalties look back over (-1: all, 0: off)"},
	{Key: "presence_penalty", OpenAI: true, LlamaCpp: "--presence-penalty", Type: Float32, Range: penalty,
		Flag: "presence-penalty", Stage: "penalties", Plugin: Standard, Usage: "presence penalty (0: off)"},
	{Key: "frequency_penalty", OpenAI: true, LlamaCpp: "--frequency-penalty", Type: Float32, Range: penalty,
		Flag: "frequency-penalty", Stage: "penalties", Plugin: Standard, Usage: "frequency penalty (0: off)"},
	{Key: "logit_bias", OpenAI: true, LlamaCpp: "--logit-bias", Type: Bias, DefaultText: "none",
		Stage: "logit bias", Plugin: Standard, Usage: "added to the logits of its ids before anything else; -Inf (false) bans the id"},
	{Key: "top_n_sigma", LlamaCpp: "--top-n-sigma", Type: Float, Range: Range{Min: 0, Max: inf, Also: []float64{-1}, Note: "-1 and 0 are off"},
		Flag: "top-n-sigma", Stage: "top_n_sigma", Plugin: Standard, Usage: "keep tokens within N standard deviations of the top logit (0: off)"},
	{Key: "xtc_probability", LlamaCpp: "--xtc-probability", Type: Float, Range: unit,
		Flag: "xtc-probability", Stage: "xtc", Plugin: Standard, Usage: "chance of XTC, removing the top choices at a step (0: off)"},
	{Key: "xtc_threshold", LlamaCpp: "--xtc-threshold", Type: Float, Range: Range{Min: 0, Max: 0.5}, Default: 0.1,
		Flag: "xtc-threshold", Stage: "xtc", Plugin: Standard, Usage: "XTC's probability threshold"},
	{Key: "dynatemp_range", LlamaCpp: "--dynatemp-range", Type: Float, Range: nonNeg,
		Flag: "dynatemp-range", Stage: "temperature", Plugin: Standard, Usage: "dynamic temperature, temperature ± range by entropy (0: off)"},
	{Key: "dynatemp_exponent", LlamaCpp: "--dynatemp-exp", Type: Float, Range: nonNeg, Default: 1,
		Flag: "dynatemp-exp", Stage: "temperature", Plugin: Standard, Usage: "dynamic temperature's exponent"},
	{Key: "samplers", LlamaCpp: "--samplers", Type: Order, DefaultText: strings.Join(DefaultSamplers, ";"),
		Flag: "samplers", Stage: "order", Plugin: Standard,
		Usage: "the chain's order, llama.cpp's stage names separated by ';' (a stage not listed does not run)"},
	{Key: "mirostat", LlamaCpp: "--mirostat", Type: Int, Range: Range{Min: 0, Max: 1, Note: "2 is the mirostat-v2 sampler"},
		Flag: "mirostat", Stage: "mirostat", Plugin: Standard,
		Usage: "Mirostat: 1 in the standard sampler, 2 the mirostat-v2 sampler; top-k, top-p, the other filters and the penalties are then off, as in llama.cpp (0: off)"},
	{Key: "mirostat_tau", LlamaCpp: "--mirostat-ent", Type: Float, Range: nonNeg, Default: 5,
		Flag: "mirostat-ent", Stage: "mirostat", Plugin: Standard, Usage: "Mirostat's target entropy tau, in bits"},
	{Key: "mirostat_eta", LlamaCpp: "--mirostat-lr", Type: Float, Range: nonNeg, Default: 0.1,
		Flag: "mirostat-lr", Stage: "mirostat", Plugin: Standard, Usage: "Mirostat's learning rate eta"},
	{Key: "dry_multiplier", LlamaCpp: "--dry-multiplier", Type: Float, Range: nonNeg,
		Flag: "dry-multiplier", Stage: "dry", Plugin: DRY, Usage: "DRY repetition penalty multiplier: the embedded dry processor before the sampler (0: off)"},
	{Key: "dry_base", LlamaCpp: "--dry-base", Type: Float, Range: Range{Min: 1, Max: inf}, Default: 1.75,
		Flag: "dry-base", Stage: "dry", Plugin: DRY, Usage: "DRY's base"},
	{Key: "dry_allowed_length", LlamaCpp: "--dry-allowed-length", Type: Int, Range: nonNeg, Default: 2,
		Flag: "dry-allowed-length", Stage: "dry", Plugin: DRY, Usage: "DRY: repeats longer than this are penalized"},
	{Key: "dry_penalty_last_n", LlamaCpp: "--dry-penalty-last-n", Type: Int, Range: window, Default: 64,
		Flag: "dry-penalty-last-n", Stage: "dry", Plugin: DRY, Usage: "DRY: the tokens scanned for repeats (-1: all, 0: off)"},
	{Key: "dry_sequence_breakers", LlamaCpp: "--dry-sequence-breaker", Type: Strings, DefaultText: `"\n" ":" "\"" "*"`,
		Flag: "dry-sequence-breaker", Stage: "dry", Plugin: DRY,
		Usage: "DRY: a string that ends a repeat, replacing the defaults (\\n : \" *); repeatable; \"none\" for none"},
	{Key: "seed", OpenAI: true, LlamaCpp: "--seed", Type: Seed, DefaultText: "random",
		Flag: "seed", Stage: "draw", Plugin: Host, Usage: "the turn's seed, passed to every plugin's reset (random when not given, and reported)"},
}

// Lookup is the parameter of key, and whether there is one.
func Lookup(key string) (Param, bool) {
	for _, p := range Params {
		if p.Key == key {
			return p, true
		}
	}
	return Param{}, false
}

// Of are the parameters plugin reads, in Params' order.
func Of(plugin string) []Param {
	var out []Param
	for _, p := range Params {
		if p.Plugin == plugin {
			out = append(out, p)
		}
	}
	return out
}

// Keys are the config keys of plugin's parameters, in Params' order.
func Keys(plugin string) []string {
	var out []string
	for _, p := range Of(plugin) {
		out = append(out, p.Key)
	}
	return out
}
