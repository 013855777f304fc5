package toolcall

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/internal/grammar"
)

const testTools = `[
 {"type": "function", "function": {"name": "get_weather", "description": "The weather",
  "parameters": {"type": "object", "properties": {"city": {"type": "string", "maxLength": 20}, "unit": {"enum": ["c", "f"]}},
   "required": ["city"], "additionalProperties": false}}},
 {"type": "function", "function": {"name": "now"}}
]`

// byteVocab is every byte as a token, and an end-of-generation token.
func byteVocab(t testing.TB) *grammar.Vocab {
	pieces := make([][]byte, 257)
	kinds := make([]grammar.TokenKind, 257)
	for i := range 256 {
		pieces[i] = []byte{byte(i)}
	}
	kinds[256] = grammar.TokenEOG
	v, err := grammar.NewVocab(pieces, kinds)
	require.NoError(t, err)
	return v
}

// TestConstrain: each family's grammar takes the calls the family writes
// (its envelope with spaces, the arguments compact), refuses arguments
// the schema forbids, a second call unless parallel, and, for a named
// choice, the other tools; under Auto it waits for its trigger.
func TestConstrain(t *testing.T) {
	tools, err := ParseTools(json.RawMessage(testTools), ChatFields)
	require.NoError(t, err)
	v := byteVocab(t)
	weather := `{"city":"Paris","unit":"c"}`
	cases := []struct {
		f          Family
		call, two  string // one call; two calls
		bad, other string // arguments the schema refuses; a call of "now"
	}{
		{Hermes, "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": " + weather + "}\n</tool_call>",
			"<tool_call>{\"name\":\"now\",\"arguments\":{}}</tool_call>\n<tool_call>{\"name\":\"now\",\"arguments\":{}}</tool_call>",
			"<tool_call>{\"name\":\"get_weather\",\"arguments\":{\"city\":\"Paris\",\"unit\":\"k\"}}</tool_call>",
			"<tool_call>{\"name\":\"now\",\"arguments\":{}}</tool_call>"},
		{Llama3, `{"name": "get_weather", "parameters": ` + weather + `}`, "",
			`{"name":"get_weather","parameters":{"town":"Paris"}}`, `{"name":"now","parameters":{"a":1}}`},
		{Mistral, `[TOOL_CALLS][{"name": "get_weather", "arguments": ` + weather + `}]`,
			`[TOOL_CALLS][{"name":"now","arguments":{}}, {"name":"now","arguments":{}}]`,
			`[TOOL_CALLS][{"name":"get_weather","arguments":{}}]`, `[TOOL_CALLS][{"name":"now","arguments":{}}]`},
		{MistralArgs, `[TOOL_CALLS]get_weather[ARGS]` + weather, `[TOOL_CALLS]now[ARGS]{}[TOOL_CALLS]now[ARGS]{}`,
			`[TOOL_CALLS]get_weather[ARGS]{"city":5}`, `[TOOL_CALLS]now[ARGS]{}`},
		{Generic, `{"tool_calls": [{"name": "get_weather", "arguments": ` + weather + `}]}`,
			`{"tool_calls":[{"name":"now","arguments":{}},{"name":"now","arguments":{}}]}`,
			`{"tool_calls":[{"name":"get_weather","arguments":{"city":"Paris","unit":"c","x":1}}]}`, `{"tool_calls":[{"name":"now","arguments":{}}]}`},
	}
	accepts := func(c Constraint, text string) bool {
		g, err := grammar.Compile(c.GBNF)
		require.NoError(t, err)
		m := grammar.NewMatcher(g, v)
		return m.AcceptBytes([]byte(text)) == nil && m.Done()
	}
	for _, tc := range cases {
		t.Run(tc.f.String(), func(t *testing.T) {
			one, err := Constrain(tc.f, tools, Choice{Mode: Required}, false)
			require.NoError(t, err)
			assert.Nil(t, one.Triggers)
			assert.True(t, accepts(one, tc.call), "%s\n%s", tc.call, one.GBNF)
			assert.False(t, accepts(one, tc.bad), tc.bad)
			assert.True(t, accepts(one, tc.other), tc.other)
			m := Parse(tc.f, tc.call)
			require.Len(t, m.Calls, 1)
			assert.Equal(t, "get_weather", m.Calls[0].Name)
			assert.JSONEq(t, weather, m.Calls[0].Arguments)
			if tc.two != "" {
				assert.False(t, accepts(one, tc.two), tc.two)
				par, err := Constrain(tc.f, tools, Choice{Mode: Required}, true)
				require.NoError(t, err)
				assert.True(t, accepts(par, tc.two), tc.two)
				assert.Len(t, Parse(tc.f, tc.two).Calls, 2)
			}
			named, err := Constrain(tc.f, tools, Choice{Mode: Named, Name: "get_weather"}, true)
			require.NoError(t, err)
			assert.True(t, accepts(named, tc.call))
			assert.False(t, accepts(named, tc.other))

			auto, err := Constrain(tc.f, tools, Choice{Mode: Auto}, true)
			require.NoError(t, err)
			require.Equal(t, []string{trigger(tc.f)}, auto.Triggers)
			g, err := grammar.Compile(auto.GBNF)
			require.NoError(t, err)
			lz, err := grammar.NewLazy(grammar.NewMatcher(g, v), auto.Triggers)
			require.NoError(t, err)
			text := "I'll check.\n" + tc.call
			for i := range len(text) {
				require.NoError(t, lz.Accept(int32(text[i])), "byte %d of %q", i, text)
			}
			assert.True(t, lz.Done())
			m = Parse(tc.f, text)
			assert.Equal(t, "I'll check.", m.Content)
			require.Len(t, m.Calls, 1)
		})
	}
}

// TestToolsAndChoice: the request fields' errors name the field.
func TestToolsAndChoice(t *testing.T) {
	tools, err := ParseTools(json.RawMessage(testTools), ChatFields)
	require.NoError(t, err)
	require.Len(t, tools, 2)
	assert.Equal(t, `{"type":"object"}`, string(tools[1].Parameters))
	// Each error names the field as the API the request came by does
	// (chat's, Messages', Responses'), and its text never another API's.
	for _, tc := range []struct{ tools, param, field, msg string }{
		{`{}`, "tools", "", "tools must be an array"},
		{`[{"type": "code"}]`, "tools[0].type", "", `tool type "code"`},
		{`[{"type": "function"}]`, "tools[0].function", "", "needs its function object"},
		{`[{"type": "function", "function": {"name": "a b"}}]`, "tools[0].", "name", `name "a b" must be 1 to 64`},
		{`[{"type": "function", "function": {"name": "a"}}, {"type": "function", "function": {"name": "a"}}]`, "tools[1].", "name", `tool "a" is defined twice`},
		{`[{"type": "function", "function": {"name": "a", "parameters": []}}]`, "tools[0].", "schema", "not a JSON Schema object"},
		{`[{"type": "function", "function": {"name": "a", "parameters": {"not": {}}}}]`, "tools[0].", "schema", "the schema cannot be enforced"},
	} {
		for _, f := range []Fields{ChatFields, MessagesFields, ResponsesFields} {
			_, err := ParseTools(json.RawMessage(tc.tools), f)
			var fe *FieldError
			require.ErrorAs(t, err, &fe, tc.tools)
			want := tc.param + map[string]string{"": "", "name": f.Name, "schema": f.Schema}[tc.field]
			assert.Equal(t, want, fe.Param, tc.tools)
			assert.Equal(t, want+": ", fe.Error()[:len(want)+2], tc.tools)
			assert.Contains(t, fe.Msg, tc.msg, tc.tools)
			if tc.field != "" {
				for _, word := range []string{"function", "parameters", "input_schema"} {
					if !strings.Contains(want, word) {
						assert.NotContains(t, fe.Msg, word, "%s: %s names another API's field", want, fe.Msg)
					}
				}
			}
		}
	}
	_, err = ParseTools(json.RawMessage(`[{"type": "function", "function": {"name": "a", "parameters": {"not": {}}}}]`), ChatFields)
	assert.True(t, errors.Is(err, ErrSchema))

	for raw, want := range map[string]Choice{
		``: {Mode: Auto}, `null`: {Mode: Auto}, `"auto"`: {Mode: Auto}, `"none"`: {Mode: None}, `"required"`: {Mode: Required},
		`{"type": "function", "function": {"name": "now"}}`: {Mode: Named, Name: "now"},
	} {
		c, err := ParseChoice(json.RawMessage(raw), tools)
		require.NoError(t, err, raw)
		assert.Equal(t, want, c, raw)
	}
	c, err := ParseChoice(nil, nil)
	require.NoError(t, err)
	assert.Equal(t, None, c.Mode)
	for raw, param := range map[string]string{
		`"sometimes"`: "tool_choice", `{"type": "function"}`: "tool_choice", `{"type": "function", "function": {"name": "later"}}`: "tool_choice.function.name",
	} {
		_, err := ParseChoice(json.RawMessage(raw), tools)
		var fe *FieldError
		require.ErrorAs(t, err, &fe, raw)
		assert.Equal(t, param, fe.Param, raw)
	}
	_, err = ParseChoice(json.RawMessage(`"required"`), nil)
	assert.Error(t, err)
}

// TestDetect: the families of llama.cpp's test templates.
func TestDetect(t *testing.T) {
	for template, want := range map[string]Family{
		"Qwen-Qwen2.5-7B-Instruct.jinja":                      Hermes,
		"Qwen-Qwen3-0.6B.jinja":                               Hermes,
		"NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use.jinja": Hermes,
		"NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja":   Hermes,
		"meta-llama-Llama-3.1-8B-Instruct.jinja":              Llama3,
		"meta-llama-Llama-3.2-3B-Instruct.jinja":              Llama3,
		"meta-llama-Llama-3.3-70B-Instruct.jinja":             Llama3,
		"mistralai-Mistral-Nemo-Instruct-2407.jinja":          Mistral,
		"Mistral-Small-3.2-24B-Instruct-2506.jinja":           MistralArgs,
		"google-gemma-2-2b-it.jinja":                          Generic,
		"microsoft-Phi-3.5-mini-instruct.jinja":               Generic,
	} {
		src := readTemplate(t, template)
		assert.Equal(t, want, Detect(src), template)
	}
	assert.Equal(t, Generic, Detect(""))
}

// TestConstrainCompact: the envelope takes at most one space after ":"
// and "," (and one newline around and between Hermes blocks), so that a
// small model cannot fill a forced call with space until max_tokens.
func TestConstrainCompact(t *testing.T) {
	tools, err := ParseTools(json.RawMessage(testTools), ChatFields)
	require.NoError(t, err)
	v := byteVocab(t)
	call := `{"name": "now", "arguments": {}}`
	for _, tc := range []struct {
		f       Family
		ok, bad []string
	}{
		{Generic, []string{`{"tool_calls": [` + call + `]}`, `{"tool_calls":[{"name":"now","arguments":{}},{"name":"now","arguments":{}}]}`},
			[]string{`{ "tool_calls": [` + call + `]}`, "{\"tool_calls\" \n: [" + call + "]}", `{"tool_calls":  [` + call + `]}`,
				`{"tool_calls": [ ` + call + `]}`, `{"tool_calls": [` + call + `] }`, `{"tool_calls": [{"name":  "now", "arguments": {}}]}`}},
		{Hermes, []string{"<tool_call>\n" + call + "\n</tool_call>", "<tool_call>" + call + "</tool_call>\n<tool_call>" + call + "</tool_call>"},
			[]string{"<tool_call>\n\n" + call + "\n</tool_call>", "<tool_call> " + call + "</tool_call>",
				"<tool_call>" + call + "</tool_call>\n\n<tool_call>" + call + "</tool_call>", "<tool_call>{ \"name\": \"now\", \"arguments\": {}}</tool_call>"}},
		{Mistral, []string{`[TOOL_CALLS][` + call + `, ` + call + `]`},
			[]string{`[TOOL_CALLS] [` + call + `]`, `[TOOL_CALLS][ ` + call + `]`, `[TOOL_CALLS][` + call + ` ,` + call + `]`}},
		{Llama3, []string{`{"name": "now", "parameters": {}}`},
			[]string{`{"name" : "now", "parameters": {}}`, "{\"name\": \"now\",\n\"parameters\": {}}", `{"name": "now", "parameters": {} }`}},
	} {
		c, err := Constrain(tc.f, tools, Choice{Mode: Required}, true)
		require.NoError(t, err)
		g, err := grammar.Compile(c.GBNF)
		require.NoError(t, err)
		accepts := func(text string) bool {
			m := grammar.NewMatcher(g, v)
			return m.AcceptBytes([]byte(text)) == nil && m.Done()
		}
		for _, text := range tc.ok {
			assert.True(t, accepts(text), "%s: %q", tc.f, text)
		}
		for _, text := range tc.bad {
			assert.False(t, accepts(text), "%s: %q", tc.f, text)
		}
	}
}
