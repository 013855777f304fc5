package plugins_test

import (
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/host"
	"github.com/realizar-host/realizar-host/internal/plugins"
)

// jsonShape scans text outside strings: the deepest nesting, the longest
// run of whitespace, whether whitespace follows the last non-whitespace
// byte, and the first non-whitespace byte (0 if none).
func jsonShape(text []byte) (depth, wsRun int, trailingWS bool, first byte) {
	d, run, inStr, esc := 0, 0, false, false
	for _, c := range text {
		switch {
		case inStr:
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			continue
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			run++
			wsRun = max(wsRun, run)
			trailingWS = true
			continue
		}
		run, trailingWS = 0, false
		if first == 0 {
			first = c
		}
		switch c {
		case '"':
			inStr = true
		case '{', '[':
			d++
			depth = max(depth, d)
		case '}', ']':
			d--
		}
	}
	return depth, wsRun, trailingWS, first
}

// FuzzJSONProcessor drives the json processor byte by byte over the text
// and checks it against encoding/json: valid JSON within the processor's
// limits (depth 64, whitespace runs of 32, an object at the top unless
// any_value, nothing after the value, UTF-8) is accepted whole with the end of
// generation allowed after it; and whenever the processor accepts a whole
// text and allows the end, encoding/json agrees it is valid.
//
//	go test -run '^$' -fuzz FuzzJSONProcessor -fuzztime 30s ./internal/plugins
func FuzzJSONProcessor(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.5e-3,true,null,"\u00e9\n"]}`, ` {"k" : {}}`, `[1,2]`, `"x"`, `-0.1`, `{"a":01}`,
		`{"a":"\xff"}`, "{\"\xc3\xa9\":[[[]]]}", `{}}`, `tru`} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	h := newHost(f, host.NewConfig())
	v := jsonVocab()
	machines := map[bool]*jsonMachine{}
	for _, anyValue := range []bool{false, true} {
		machines[anyValue] = newJSONMachine(f, h, v, jsonConfig(plugins.JSONMode{AnyValue: anyValue}))
	}
	f.Fuzz(func(t *testing.T, text []byte, anyValue bool) {
		if len(text) > 512 {
			return
		}
		m := machines[anyValue]
		m.t = t
		require.NoError(t, m.s.Reset(1, []int32{5}))
		m.next = nil
		got, next := m.drive(bytesOf(string(text)))
		depth, wsRun, trailingWS, first := jsonShape(text)
		// encoding/json lets invalid UTF-8 through strings; RFC 8259 (8.1)
		// and the processor do not (testdata/fuzz/FuzzJSONProcessor/fd07bec1b1fdea00)
		within := depth <= 64 && wsRun <= 32 && !trailingWS && (anyValue || first == '{') && utf8.Valid(text)
		if json.Valid(text) && within {
			require.Equal(t, len(text), got, "valid JSON %q refused at byte %d", text, got)
			require.True(t, next[idEOG], "valid JSON %q: the end of generation is masked", text)
		}
		if got == len(text) && next[idEOG] {
			require.True(t, json.Valid(text), "%q accepted as a whole value", text)
		}
	})
}
