package sampling

import "errors"

// ErrConfig wraps every configuration error of the sampling parameters
// (and of the standard sampler, whose ErrConfig it is).
var ErrConfig = errors.New("standard: bad config")

// RangeError is a config value outside its range: the key, what it must
// be and the value given. It unwraps to ErrConfig; its message is the C
// build's log line ("config: top_p must be in [0, 1]"), without the value.
type RangeError struct {
	Key  string // the config key, "top_p"
	Want string // the range, "in [0, 1]"
	Got  string // the value refused, as text ("1.5"); "" when not known
}

func (e *RangeError) Error() string { return "config: " + e.Key + " must be " + e.Want }
func (e *RangeError) Unwrap() error { return ErrConfig }

// SamplerError is a samplers entry the sampler refuses: Name as given (its
// first 32 bytes) and why. It unwraps to ErrConfig; its message is the C
// build's log line (`config: samplers: "foo" is unknown`).
type SamplerError struct {
	Name string // the entry, "foo"
	Why  string // "is unknown", "is not offered", "is listed twice", "must come before every stage but dry"
}

func (e *SamplerError) Error() string {
	name := e.Name
	if len(name) > 32 {
		name = name[:32]
	}
	return `config: samplers: "` + name + `" ` + e.Why
}
func (e *SamplerError) Unwrap() error { return ErrConfig }
