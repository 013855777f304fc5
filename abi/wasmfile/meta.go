package wasmfile

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/realizar-host/realizar-host/abi"
)

// Meta describes a plugin. Its JSON form, as MarshalMeta writes it, is
// the object {"abi":1,"kind":"sampler","name":"greedy","version":"1.0.0",
// "description":"..."} with the keys in that order and no spaces, so the
// same Meta always gives the same bytes.
type Meta struct {
	ABI         int    `json:"abi"`         // ABI version, abi.Version
	Kind        string `json:"kind"`        // "sampler", "processor" or "stop"
	Name        string `json:"name"`        // short name, [a-z0-9._-]{1,64}
	Version     string `json:"version"`     // the plugin's own version, free text up to 64 bytes
	Description string `json:"description"` // one line for humans, up to 1024 bytes
}

// MetaError is a malformed metadata section.
type MetaError struct{ Reason string }

func (e *MetaError) Error() string { return "wasmfile: metadata: " + e.Reason }

// Validate checks m's fields (not its ABI version, which a caller compares
// with abi.Version to tell "too new" from "malformed").
func (m Meta) Validate() error {
	if _, ok := abi.ParseKind(m.Kind); !ok {
		return &MetaError{fmt.Sprintf("kind %q is not sampler, processor or stop", m.Kind)}
	}
	if len(m.Name) == 0 || len(m.Name) > 64 {
		return &MetaError{fmt.Sprintf("name %q must have 1 to 64 bytes", m.Name)}
	}
	for _, c := range []byte(m.Name) {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return &MetaError{fmt.Sprintf("name %q: only a-z 0-9 . _ - allowed", m.Name)}
		}
	}
	if len(m.Version) > 64 {
		return &MetaError{"version longer than 64 bytes"}
	}
	if len(m.Description) > 1024 {
		return &MetaError{"description longer than 1024 bytes"}
	}
	return nil
}

// MarshalMeta returns m's canonical JSON bytes.
func MarshalMeta(m Meta) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// UnmarshalMeta parses a metadata section's payload. Unknown keys are an
// error, so a typo does not pass silently.
func UnmarshalMeta(b []byte) (Meta, error) {
	var m Meta
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return Meta{}, &MetaError{"invalid JSON: " + err.Error()}
	}
	if dec.More() {
		return Meta{}, &MetaError{"trailing data after the JSON object"}
	}
	return m, nil
}
