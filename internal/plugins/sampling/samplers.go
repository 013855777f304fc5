package sampling

import "strings"

// DefaultSamplers is llama.cpp's default order of the chain (common.h's
// common_params_sampling.samplers), in its canonical names.
var DefaultSamplers = []string{"penalties", "dry", "top_n_sigma", "top_k", "typ_p", "top_p", "min_p", "xtc", "temperature"}

// Stage codes, llama.cpp's sampler characters (common_sampler_type_to_chr);
// Stages resolves the samplers entries to them.
const (
	StagePenalties = 'e'
	stageDRY       = 'd'
	StageSigma     = 's'
	StageTopK      = 'k'
	StageTypical   = 'y'
	StageTopP      = 'p'
	StageMinP      = 'm'
	StageXTC       = 'x'
	StageTemp      = 't'
	stageInfill    = 'i' // llama.cpp's; not offered
	stageAdaptive  = 'a' // llama.cpp's; not offered
)

// samplerNames are the names the samplers key takes: llama.cpp's canonical
// names and its misc aliases, plus typical_p (the value's key). Each name
// with '_' also matches with every '_' as '-' ("top-k") or dropped
// ("topk"), as llama.cpp's aliases; matching ignores ASCII case. The C
// build has the same table.
var samplerNames = []struct {
	name  string
	stage byte
}{
	{"penalties", StagePenalties}, {"dry", stageDRY}, {"top_n_sigma", StageSigma}, {"top_k", StageTopK},
	{"typ_p", StageTypical}, {"typical_p", StageTypical}, {"typ", StageTypical}, {"top_p", StageTopP},
	{"nucleus", StageTopP}, {"min_p", StageMinP}, {"xtc", StageXTC}, {"temperature", StageTemp},
	{"temp", StageTemp}, {"infill", stageInfill}, {"adaptive_p", stageAdaptive},
}

// errSamplersShape is a samplers value that is neither a JSON list of
// strings nor a string.
var errSamplersShape = &RangeError{Key: "samplers", Want: `a list of names or a ";"-separated string`}

// ParseSamplers reads the samplers config value as config_get answers it:
// a JSON list of strings without escapes (["top_k", "temp"]), or else the
// text of a string, names separated by ';' ("top_k;temp"; "" is the empty
// list). Spaces around a name are dropped; the names are not checked here
// (Stages does). Another shape (a list of anything but such strings,
// an object) is a *RangeError for "samplers".
func ParseSamplers(raw []byte) ([]string, error) {
	s := string(raw)
	t := strings.Trim(s, " \t\r\n")
	if strings.HasPrefix(t, "{") {
		return nil, errSamplersShape
	}
	if !strings.HasPrefix(t, "[") {
		if t == "" {
			return []string{}, nil
		}
		out := []string{}
		for _, name := range strings.Split(s, ";") {
			out = append(out, strings.Trim(name, " \t\r\n"))
		}
		return out, nil
	}
	out := []string{}
	i := 1
	skip := func() {
		for i < len(t) && strings.IndexByte(" \t\r\n", t[i]) >= 0 {
			i++
		}
	}
	skip()
	if i < len(t) && t[i] == ']' {
		i++
		skip()
		if i != len(t) {
			return nil, errSamplersShape
		}
		return out, nil
	}
	for {
		if i >= len(t) || t[i] != '"' {
			return nil, errSamplersShape
		}
		j := i + 1
		for j < len(t) && t[j] != '"' && t[j] != '\\' && t[j] >= 0x20 {
			j++
		}
		if j >= len(t) || t[j] != '"' {
			return nil, errSamplersShape
		}
		out = append(out, strings.Trim(t[i+1:j], " \t\r\n"))
		i = j + 1
		skip()
		switch {
		case i < len(t) && t[i] == ',':
			i++
			skip()
		case i < len(t) && t[i] == ']':
			i++
			skip()
			if i != len(t) {
				return nil, errSamplersShape
			}
			return out, nil
		default:
			return nil, errSamplersShape
		}
	}
}

// stageOf is the stage a samplers entry names, or 0.
func stageOf(name string) byte {
	b := []byte(name)
	for i, ch := range b {
		if ch >= 'A' && ch <= 'Z' {
			b[i] = ch + 'a' - 'A'
		}
	}
	lower := string(b) // ASCII case only, as the C build
	for _, sn := range samplerNames {
		if lower == sn.name || lower == strings.ReplaceAll(sn.name, "_", "-") || lower == strings.ReplaceAll(sn.name, "_", "") {
			return sn.stage
		}
	}
	return 0
}

// Stages resolves the samplers entries (nil: DefaultSamplers) to stage
// codes, in order. An unknown name, infill or adaptive_p (not offered), a
// stage listed twice, or penalties after a stage other than dry is a
// *SamplerError naming the entry.
func Stages(names []string) ([]byte, error) {
	if names == nil {
		names = DefaultSamplers
	}
	out := make([]byte, 0, len(names))
	for _, name := range names {
		st := stageOf(name)
		switch {
		case st == 0:
			return nil, &SamplerError{Name: name, Why: "is unknown"}
		case st == stageInfill || st == stageAdaptive:
			return nil, &SamplerError{Name: name, Why: "is not offered"}
		}
		for _, prev := range out {
			if prev == st {
				return nil, &SamplerError{Name: name, Why: "is listed twice"}
			}
			if st == StagePenalties && prev != stageDRY {
				return nil, &SamplerError{Name: name, Why: "must come before every stage but dry"}
			}
		}
		out = append(out, st)
	}
	return out, nil
}

// HasStage reports whether order holds st.
func HasStage(order []byte, st byte) bool {
	for _, x := range order {
		if x == st {
			return true
		}
	}
	return false
}

// ListsDRY reports whether the samplers entries (nil: DefaultSamplers)
// name dry, in any spelling: the order in which llama.cpp runs DRY at
// all. (The standard sampler itself skips dry; the dry processor, when
// loaded, runs before it.) The entries are not otherwise checked.
func ListsDRY(names []string) bool {
	if names == nil {
		return true
	}
	for _, name := range names {
		if stageOf(name) == stageDRY {
			return true
		}
	}
	return false
}
