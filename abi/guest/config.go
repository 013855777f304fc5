package guest

import (
	"errors"
	"math"
	"strconv"
)

// ErrConfig is returned by the Config readers for a value of the wrong type;
// a plugin answers abi.ErrConfig from realizar_init after logging it.
//
// This package avoids fmt and encoding/json: both import os, whose wasip1
// build imports WASI functions (fd_read ...) that the host refuses.
var ErrConfig = errors.New("guest: bad config value")

func configErr(key, why string) error {
	return errors.Join(ErrConfig, errors.New("config "+key+": "+why))
}

// ConfigFloat sets *out to the number under key and reports whether the key
// was present. A value that is not a finite JSON number (or a string
// holding one) is an error wrapping ErrConfig.
func ConfigFloat(key string, out *float64) (bool, error) {
	raw, ok := ConfigRaw(key)
	if !ok {
		return false, nil
	}
	v, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return true, configErr(key, strconv.Quote(string(raw))+" is not a number")
	}
	*out = v
	return true, nil
}

// ConfigInt sets *out to the integer under key (a JSON number with no
// fractional part, in int32 range) and reports whether the key was present.
func ConfigInt(key string, out *int) (bool, error) {
	var v float64
	ok, err := ConfigFloat(key, &v)
	if !ok || err != nil {
		return ok, err
	}
	if v != math.Trunc(v) || v < math.MinInt32 || v > math.MaxInt32 {
		return true, configErr(key, "is not a 32-bit integer")
	}
	*out = int(v)
	return true, nil
}

// ConfigBool sets *out to the boolean under key and reports whether the
// key was present.
func ConfigBool(key string, out *bool) (bool, error) {
	raw, ok := ConfigRaw(key)
	if !ok {
		return false, nil
	}
	switch string(raw) {
	case "true":
		*out = true
	case "false":
		*out = false
	default:
		return true, configErr(key, "is not true or false")
	}
	return true, nil
}

// ConfigStrings returns the strings under key: a JSON array of strings, or
// one string. (config_get gives a string value decoded, so a single string
// that is itself a JSON array of strings reads as that array; the C SDK
// reads it the same way.)
func ConfigStrings(key string) ([]string, bool, error) {
	raw, ok := ConfigRaw(key)
	if !ok {
		return nil, false, nil
	}
	if len(raw) > 0 && raw[0] == '[' {
		if out, ok := ParseStrings(raw); ok {
			return out, true, nil
		}
	}
	return []string{string(raw)}, true, nil
}
