package toolcall

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type parseCase struct {
	Name    string `json:"name"`
	Family  string `json:"family"`
	Text    string `json:"text"`
	Content string `json:"content"`
	Calls   []struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"calls"`
	// NoStream: a call begins streaming but does not parse at the end, so
	// the stream and Parse differ.
	NoStream bool `json:"nostream"`
}

func familyByName(t testing.TB, name string) Family {
	for f := Generic; f <= MistralArgs; f++ {
		if f.String() == name {
			return f
		}
	}
	t.Fatalf("no family %q", name)
	return 0
}

func loadCases(t testing.TB) []parseCase {
	b, err := os.ReadFile("testdata/parse.json")
	require.NoError(t, err)
	var cases []parseCase
	require.NoError(t, json.Unmarshal(b, &cases))
	return cases
}

// TestParse: each family's texts (testdata/parse.json) parse into the
// content and calls given there.
func TestParse(t *testing.T) {
	for _, tc := range loadCases(t) {
		t.Run(tc.Name, func(t *testing.T) {
			m := Parse(familyByName(t, tc.Family), tc.Text)
			assert.Equal(t, tc.Content, m.Content)
			require.Len(t, m.Calls, len(tc.Calls))
			for i, c := range tc.Calls {
				assert.Equal(t, c.Name, m.Calls[i].Name)
				assert.Equal(t, c.Arguments, m.Calls[i].Arguments)
				assert.True(t, json.Valid([]byte(m.Calls[i].Arguments)))
			}
		})
	}
}

// accumulate is what a client that appends the deltas ends with.
func accumulate(ds []Delta, content *strings.Builder, calls *[]Call) error {
	for _, d := range ds {
		if d.Call == nil {
			content.WriteString(d.Content)
			continue
		}
		c := d.Call
		switch {
		case c.First && c.Index == len(*calls):
			*calls = append(*calls, Call{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
		case !c.First && c.Index < len(*calls) && c.ID == "" && c.Name == "":
			(*calls)[c.Index].Arguments += c.Arguments
		default:
			return fmt.Errorf("delta out of order: %+v", *c)
		}
	}
	return nil
}

// TestStream: fed in pieces of 1, 2, 3, 7 bytes or whole, a stream's
// deltas add up to what Parse reads, and Finish agrees, ids included.
func TestStream(t *testing.T) {
	for _, tc := range loadCases(t) {
		if tc.NoStream {
			continue
		}
		for _, size := range []int{1, 2, 3, 7, len(tc.Text)} {
			t.Run(fmt.Sprintf("%s/%d", tc.Name, size), func(t *testing.T) {
				f := familyByName(t, tc.Family)
				n := 0
				s := NewStream(f, func() string { n++; return fmt.Sprintf("call_%d", n) })
				var content strings.Builder
				var calls []Call
				for i := 0; i < len(tc.Text); i += size {
					require.NoError(t, accumulate(s.Feed(tc.Text[i:min(i+size, len(tc.Text))]), &content, &calls))
				}
				ds, m := s.Finish()
				require.NoError(t, accumulate(ds, &content, &calls))
				want := Parse(f, tc.Text)
				assert.Equal(t, want.Content, content.String())
				assert.Equal(t, want.Content, m.Content)
				require.Len(t, calls, len(want.Calls))
				require.Len(t, m.Calls, len(want.Calls))
				for i := range calls {
					assert.Equal(t, want.Calls[i].Name, calls[i].Name)
					assert.Equal(t, want.Calls[i].Arguments, calls[i].Arguments)
					assert.Equal(t, calls[i], m.Calls[i])
					assert.Equal(t, fmt.Sprintf("call_%d", i+1), calls[i].ID)
				}
			})
		}
	}
}

// TestStreamArgumentsGrow: a call's first delta comes as soon as its name
// is known, before its arguments are complete, and later deltas carry only
// argument text.
func TestStreamArgumentsGrow(t *testing.T) {
	s := NewStream(Hermes, func() string { return "call_x" })
	d := s.Feed("Sure.\n<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": ")
	require.Len(t, d, 2)
	assert.Equal(t, "Sure.", d[0].Content)
	require.NotNil(t, d[1].Call)
	assert.Equal(t, CallDelta{Index: 0, First: true, ID: "call_x", Name: "f", Arguments: `{"a": `}, *d[1].Call)
	d = s.Feed(`"b"}}`)
	require.Len(t, d, 1)
	assert.Equal(t, CallDelta{Index: 0, Arguments: `"b"}`}, *d[0].Call)
	d = s.Feed("\n</tool_call>")
	assert.Empty(t, d)
	d, m := s.Finish()
	assert.Empty(t, d)
	assert.Equal(t, Message{Content: "Sure.", Calls: []Call{{ID: "call_x", Name: "f", Arguments: `{"a": "b"}`}}}, m)
}

// TestStreamGenericGrows: the generic envelope streams as the others do:
// the call's first delta once its name is known, then its arguments'
// text as written, the pieces adding up to the call's Arguments.
func TestStreamGenericGrows(t *testing.T) {
	s := NewStream(Generic, func() string { return "call_x" })
	assert.Empty(t, s.Feed(`{"tool_calls": [{"name": "`))
	d := s.Feed(`f"`)
	require.Len(t, d, 1)
	assert.Equal(t, CallDelta{Index: 0, First: true, ID: "call_x", Name: "f"}, *d[0].Call)
	d = s.Feed(`, "arguments": {"a": `)
	require.Len(t, d, 1)
	assert.Equal(t, CallDelta{Index: 0, Arguments: `{"a": `}, *d[0].Call)
	d = s.Feed(`"b"}}, {"name": "g", "arguments": {`)
	require.Len(t, d, 2)
	assert.Equal(t, CallDelta{Index: 0, Arguments: `"b"}`}, *d[0].Call)
	assert.Equal(t, CallDelta{Index: 1, First: true, ID: "call_x", Name: "g", Arguments: `{`}, *d[1].Call)
	d = s.Feed(`}`)
	require.Len(t, d, 1)
	assert.Equal(t, CallDelta{Index: 1, Arguments: `}`}, *d[0].Call)
	assert.Empty(t, s.Feed("}]}"))
	d, m := s.Finish()
	assert.Empty(t, d)
	assert.Equal(t, Message{Calls: []Call{{ID: "call_x", Name: "f", Arguments: `{"a": "b"}`}, {ID: "call_x", Name: "g", Arguments: `{}`}}}, m)
}

// TestCutCalls: for each family, a turn cut inside its second call
// (parallel calls at max_tokens) parses as its first call, the cut one
// dropped; cut inside its only call it is content. Streamed byte by
// byte, the cut call has been streamed (its arguments so far) and its
// text is never sent as content.
func TestCutCalls(t *testing.T) {
	for _, tc := range []struct {
		f          Family
		call, cut  string // a complete call; a call cut inside its arguments
		sep, close string // between calls; after the last one (the envelope's end)
		open       string // the envelope's start
	}{
		{f: Hermes, call: `<tool_call>` + "\n" + `{"name": "a", "arguments": {"k": 1}}` + "\n</tool_call>",
			cut: `<tool_call>` + "\n" + `{"name": "b", "arguments": {"k": "v`, sep: "\n"},
		{f: Mistral, open: `[TOOL_CALLS][`, call: `{"name": "a", "arguments": {"k": 1}}`, sep: ", ",
			cut: `{"name": "b", "arguments": {"k": "v`, close: "]"},
		{f: MistralArgs, call: `[TOOL_CALLS]a[ARGS]{"k": 1}`, cut: `[TOOL_CALLS]b[ARGS]{"k": "v`},
		{f: Generic, open: `{"tool_calls": [`, call: `{"name": "a", "arguments": {"k": 1}}`, sep: ", ",
			cut: `{"name": "b", "arguments": {"k": "v`, close: "]}"},
		{f: Llama3, cut: `{"name": "b", "parameters": {"k": "v`},
	} {
		t.Run(tc.f.String(), func(t *testing.T) {
			texts := []string{tc.open + tc.cut}
			if tc.call != "" {
				texts = append(texts, tc.open+tc.call+tc.sep+tc.cut)
			}
			for n, text := range texts {
				m := Parse(tc.f, text)
				if n == 0 {
					assert.Equal(t, Message{Content: text}, m, "the only call, cut")
				} else {
					assert.Equal(t, Message{Calls: []Call{{Name: "a", Arguments: `{"k": 1}`}}}, m, "a call, then one cut")
				}
				s := NewStream(tc.f, func() string { return "id" })
				var content strings.Builder
				var calls []Call
				for i := range len(text) {
					require.NoError(t, accumulate(s.Feed(text[i:i+1]), &content, &calls))
				}
				ds, fm := s.Finish()
				require.NoError(t, accumulate(ds, &content, &calls))
				assert.Empty(t, content.String(), "the cut call's text sent as content")
				require.Len(t, calls, n+1)
				assert.Equal(t, Call{ID: "id", Name: "b", Arguments: `{"k": "v`}, calls[n])
				assert.Equal(t, m.Content, fm.Content)
				assert.Len(t, fm.Calls, len(m.Calls))
			}
			if tc.close != "" {
				// Whole, the same calls are two.
				whole := tc.open + tc.call + tc.sep + tc.call + tc.close
				assert.Len(t, Parse(tc.f, whole).Calls, 2, whole)
			}
		})
	}
}

// TestMarkers: the texts each family's parser looks for, and a call
// written with them parses (they are what must reach the parser).
func TestMarkers(t *testing.T) {
	cases := []struct {
		f       Family
		markers []string
		text    string
	}{
		{Hermes, []string{"<tool_call>", "</tool_call>"}, `<tool_call>{"name": "f", "arguments": {}}</tool_call> ok`},
		{Llama3, []string{"<|python_tag|>"}, `<|python_tag|>f.call(x="1")`},
		{Mistral, []string{"[TOOL_CALLS]"}, `[TOOL_CALLS][{"name": "f", "arguments": {}}]`},
		{MistralArgs, []string{"[TOOL_CALLS]", "[ARGS]", "[CALL_ID]"}, `[TOOL_CALLS]f[CALL_ID]abc123def[ARGS]{}`},
		{Generic, nil, `{"tool_calls": [{"name": "f", "arguments": {}}]}`},
	}
	for _, c := range cases {
		t.Run(c.f.String(), func(t *testing.T) {
			assert.Equal(t, c.markers, c.f.Markers())
			m := Parse(c.f, c.text)
			require.Len(t, m.Calls, 1, "%q", c.text)
			assert.Equal(t, "f", m.Calls[0].Name)
			for _, mk := range c.markers {
				hidden := Parse(c.f, strings.ReplaceAll(c.text, mk, ""))
				assert.NotEqual(t, m, hidden, "without %q the text reads otherwise", mk)
			}
		})
	}
}
