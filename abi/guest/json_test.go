package guest_test

import (
	"encoding/hex"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"

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
