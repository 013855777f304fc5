package wasmfile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/realizar-host/realizar-host/abi"
)

// Meta describes a plugin. Its JSON form, as MarshalMeta writes it, is
// the object {"abi":1,"kind":"sampler","name":"greedy","version":"1.0.0",
// "description":"..."} with the keys in that order and no spaces, so the
// same Meta always gives the same bytes.
//
// From ABI version 2 the object may also carry keys that start with "x-"
// (vendor or tool data the host does not interpret); they are kept in X
// and written after the five keys, sorted. Any other unknown key is
// refused, at every version, so a typo does not pass silently.
type Meta struct {
	ABI         int    `json:"abi"`         // ABI version, abi.Version or abi.Version2
	Kind        string `json:"kind"`        // "sampler", "processor" or "stop"
	Name        string `json:"name"`        // short name, [a-z0-9._-]{1,64}
	Version     string `json:"version"`     // the plugin's own version, free text up to 64 bytes
	Description string `json:"description"` // one line for humans, up to 1024 bytes

	// X holds the "x-" keys of a v2 metadata object with their raw JSON
	// values; nil when there are none.
	X map[string]json.RawMessage `json:"-"`
}

// MetaError is a malformed metadata section.
type MetaError struct{ Reason string }

func (e *MetaError) Error() string { return "wasmfile: metadata: " + e.Reason }

// Validate checks m's fields (not its ABI version, which a caller compares
// with abi.Version to tell "too new" from "malformed").
func (m Meta) Validate() error {
	if _, ok := abi.ParseKind(m.Kind); !ok {
		return &MetaError{fmt.Sprintf("kind %q is not sampler, processor, stop or drafter", m.Kind)}
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
	if len(m.X) > 0 && m.ABI < abi.Version2 {
		return &MetaError{fmt.Sprintf("x- keys need ABI %d or later (this is ABI %d)", abi.Version2, m.ABI)}
	}
	for k := range m.X {
		if !strings.HasPrefix(k, "x-") {
			return &MetaError{fmt.Sprintf("extension key %q does not start with x-", k)}
		}
	}
	return nil
}

// metaKeys are the keys of Meta's JSON form.
var metaKeys = []string{"abi", "kind", "name", "version", "description"}

// MarshalMeta returns m's canonical JSON bytes.
func MarshalMeta(m Meta) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return nil, err
	}
	out := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	if len(m.X) == 0 {
		return out, nil
	}
	out = out[:len(out)-1] // the closing brace
	keys := make([]string, 0, len(m.X))
	for k := range m.X {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		var v bytes.Buffer
		if err := json.Compact(&v, m.X[k]); err != nil {
			return nil, fmt.Errorf("wasmfile: metadata key %q: %w", k, err)
		}
		kb, _ := json.Marshal(k)
		out = append(append(append(append(out, ','), kb...), ':'), v.Bytes()...)
	}
	return append(out, '}'), nil
}

// UnmarshalMeta parses a metadata section's payload. Unknown keys are an
// error, so a typo does not pass silently, except keys starting with "x-"
// when "abi" is 2 or later (they go to X).
func UnmarshalMeta(b []byte) (Meta, error) {
	var m Meta
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	err := dec.Decode(&m)
	if err == nil && dec.More() {
		return Meta{}, &MetaError{"trailing data after the JSON object"}
	}
	if err == nil {
		return m, nil
	}
	// An unknown key: accepted only as an x- key of a v2 object.
	var raw map[string]json.RawMessage
	var version int
	if json.Unmarshal(b, &raw) != nil || json.Unmarshal(raw["abi"], &version) != nil || version < abi.Version2 {
		return Meta{}, &MetaError{"invalid JSON: " + err.Error()}
	}
	m = Meta{}
	for k, v := range raw {
		if slices.Contains(metaKeys, k) {
			continue
		}
		if !strings.HasPrefix(k, "x-") {
			return Meta{}, &MetaError{fmt.Sprintf("unknown key %q (only x- keys may be added)", k)}
		}
		if m.X == nil {
			m.X = map[string]json.RawMessage{}
		}
		m.X[k] = v
		delete(raw, k)
	}
	known, _ := json.Marshal(raw)
	if err := json.Unmarshal(known, &m); err != nil {
		return Meta{}, &MetaError{"invalid JSON: " + err.Error()}
	}
	return m, nil
}
