package guest_test

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/abi/guest"
)

func TestParseStrings(t *testing.T) {
	tests := []struct {
		in   string
		want []string
		ok   bool
	}{
		{`[]`, []string{}, true},
		{` [ "a" , "b\n" ] `, []string{"a", "b\n"}, true},
		{`["\u00e9\ud83d\ude00","\"\\\/\b\f\r\t"]`, []string{"é😀", "\"\\/\b\f\r\t"}, true},
		{`["\ud800x"]`, []string{"\ufffdx"}, true},
		{`["a",]`, nil, false},
		{`["a"`, nil, false},
		{`"a"`, nil, false},
		{`[1]`, nil, false},
		{`["a\x"]`, nil, false},
		{"[\"a\x01\"]", nil, false},
		{`["a"] x`, nil, false},
		// FuzzParseStrings found (testdata/fuzz/FuzzParseStrings): a raw
		// invalid UTF-8 byte, which encoding/json turns into U+FFFD.
		{"[\"\x80\"]", nil, false},
	}
	for _, tt := range tests {
		got, ok := guest.ParseStrings([]byte(tt.in))
		assert.Equal(t, tt.ok, ok, tt.in)
		if tt.ok {
			assert.Equal(t, tt.want, got, tt.in)
		}
	}
}

// TestCParseStrings: the C SDK's realizar_json_strings decodes exactly what
// ParseStrings decodes.
func TestCParseStrings(t *testing.T) {
	bin := cVectors(t)
	inputs := []string{`[]`, `["a","b"]`, `["\u00e9\ud83d\ude00"]`, `["\ud800x"]`, "[\"\x80\"]", `["a",]`,
		`[""]`, `["\n",":","\"","*"]`, `[1]`, "[\"\xe6\x97\xa5\"]", "[\"\xed\xa0\x80\"]", "[\"\xc0\xaf\"]"}
	var cmds, want []string
	for _, in := range inputs {
		cmds = append(cmds, "json "+hex.EncodeToString([]byte(in)))
		got, ok := guest.ParseStrings([]byte(in))
		if !ok {
			want = append(want, "-1")
			continue
		}
		w := strconv.Itoa(len(got))
		for _, s := range got {
			if s == "" {
				w += " -"
				continue
			}
			w += " " + hex.EncodeToString([]byte(s))
		}
		want = append(want, w)
	}
	got := runC(t, bin, cmds)
	for i := range inputs {
		assert.Equal(t, want[i], got[i], inputs[i])
	}
}

// FuzzParseStrings: whatever ParseStrings accepts, encoding/json decodes
// to the same strings; and it never panics.
func FuzzParseStrings(f *testing.F) {
	for _, s := range []string{`[]`, `["a","b"]`, `["\u00e9"]`, `["\ud800"]`, `[" \n"]`, `["`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		got, ok := guest.ParseStrings(in)
		if !ok {
			return
		}
		var want []string
		if err := json.Unmarshal(in, &want); err != nil {
			t.Fatalf("ParseStrings accepted %q, encoding/json: %v", in, err)
		}
		if len(want) == 0 {
			want = []string{}
		}
		assert.Equal(t, want, got)
	})
}

// objectKeysInputs are ObjectKeys' table and the C parity inputs.
var objectKeysInputs = []struct {
	in   string
	want []string
	ok   bool
}{
	{`{}`, []string{}, true},
	{` { "a" : 1 , "b" : "x" } `, []string{"a", "b"}, true},
	{`{"temp\u0065rature":0.5}`, []string{"temperature"}, true},
	{`{"a":{"b":[1,{"c":"}"}]},"d":[],"e":null,"f":-1.5e3,"g":true}`, []string{"a", "d", "e", "f", "g"}, true},
	{`{"a":"\"}"}`, []string{"a"}, true},
	{`{"a":1,"a":2}`, []string{"a", "a"}, true},
	{`[]`, nil, false},
	{`{"a"}`, nil, false},
	{`{"a":}`, nil, false},
	{`{"a":1,}`, nil, false},
	{`{"a":1} x`, nil, false},
	{`{"a":[1}`, nil, false},
	{`{"a":{"b":1}`, nil, false},
	{`{a:1}`, nil, false},
	{"{\"\x80\":1}", nil, false},
	{``, nil, false},
}

func TestObjectKeys(t *testing.T) {
	for _, tt := range objectKeysInputs {
		got, ok := guest.ObjectKeys([]byte(tt.in))
		assert.Equal(t, tt.ok, ok, tt.in)
		if tt.ok {
			assert.Equal(t, tt.want, got, tt.in)
		}
	}
}

// TestCObjectKeys: the C SDK's realizar_json_keys finds exactly the keys
// ObjectKeys finds.
func TestCObjectKeys(t *testing.T) {
	bin := cVectors(t)
	var cmds, want []string
	for _, tt := range objectKeysInputs {
		h := hex.EncodeToString([]byte(tt.in))
		if h == "" {
			h = "-"
		}
		cmds = append(cmds, "keys "+h)
		if !tt.ok {
			want = append(want, "-1")
			continue
		}
		w := strconv.Itoa(len(tt.want))
		for _, k := range tt.want {
			w += " " + hex.EncodeToString([]byte(k))
		}
		want = append(want, w)
	}
	got := runC(t, bin, cmds)
	for i, tt := range objectKeysInputs {
		assert.Equal(t, want[i], got[i], tt.in)
	}
}

func TestCheckKeys(t *testing.T) {
	known := []string{"temperature", "top_k"}
	assert.NoError(t, guest.CheckKeys(nil, known...))
	assert.NoError(t, guest.CheckKeys([]byte(`{"top_k":1,"temperature":0}`), known...))
	err := guest.CheckKeys([]byte(`{"top_k":1,"temprature":0}`), known...)
	assert.ErrorIs(t, err, guest.ErrConfig)
	assert.ErrorContains(t, err, "config: unknown key temprature (the keys are temperature, top_k)")
	assert.ErrorIs(t, guest.CheckKeys([]byte(`[1]`), known...), guest.ErrConfig)
}

// FuzzObjectKeys: for every valid JSON object in valid UTF-8 (ObjectKeys
// refuses invalid bytes, encoding/json replaces them), ObjectKeys gives the
// keys encoding/json's tokenizer reads at the top level; it never panics.
func FuzzObjectKeys(f *testing.F) {
	for _, tt := range objectKeysInputs {
		f.Add([]byte(tt.in))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		got, ok := guest.ObjectKeys(in)
		if !json.Valid(in) || !utf8.Valid(in) {
			return
		}
		want, isObject := topLevelKeys(in)
		if !isObject {
			assert.False(t, ok, "%q", in)
			return
		}
		require.True(t, ok, "%q", in)
		assert.Equal(t, want, got, "%q", in)
	})
}

// topLevelKeys reads the top-level keys of valid JSON with encoding/json.
func topLevelKeys(in []byte) ([]string, bool) {
	dec := json.NewDecoder(bytes.NewReader(in))
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, false
	}
	keys := []string{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		keys = append(keys, tok.(string))
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
	}
	return keys, true
}

func TestLastLine(t *testing.T) {
	err := guest.CheckKeys([]byte(`{"x":1}`), "y")
	assert.Equal(t, "config: unknown key x (the keys are y)", guest.LastLine(err))
}
