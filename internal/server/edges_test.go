package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/internal/server/toolcall"
	"github.com/realizar-host/realizar-host/model"
)

// noToolsTemplate is a Hermes template (it mentions <tool_call>) that
// renders no tools, so the prompt stays small however many tools a
// request defines, and the turn reaches the tools' grammar.
const noToolsTemplate = `{#- <tool_call> -#}{% for m in messages %}<|{{ m.role }}|>{{ m.content }}{% endfor %}<|assistant|>`

// enumTool is a function named name whose one argument is an enum of n
// values of about width bytes.
func enumTool(name string, n, width int) string {
	vals := make([]string, n)
	for i := range vals {
		vals[i] = strconv.Quote(fmt.Sprintf("%0*d", width, i))
	}
	return `{"type":"function","function":{"name":"` + name + `","parameters":{"type":"object","properties":` +
		`{"v":{"enum":[` + strings.Join(vals, ",") + `]}},"required":["v"]}}}`
}

// TestToolLimits: the documented maximums work — 128 tools, a tool whose
// enum has grammar.MaxEnumValues (4,096) values — where their grammar
// once passed the host's 64 KiB plugin config cap; tools whose grammar
// passes a cap are a 400 naming the function at which it does
// (tools[i].function.parameters), not an internal config.
func TestToolLimits(t *testing.T) {
	// Rendered in-process (RenderChat nil): a megabyte of tools takes the
	// sandbox past its 2 s deadline before their grammar is built, and the
	// caps under test are the grammar's.
	toolModel := withToolModel(t, noToolsTemplate, testSandbox(t))
	s := startServerWith(t, testTenantsFile(), Config{}, func(m *Model, mdl *model.Model) {
		toolModel(m, mdl)
		m.RenderChat = nil
	})
	chat := func(tools []string, choice string) (int, []byte) {
		body := `{"messages":[{"role":"user","content":"hi"}],"max_tokens":2,"tools":[` + strings.Join(tools, ",") + `]`
		if choice != "" {
			body += `,"tool_choice":` + choice
		}
		return s.do(t, "POST", "/v1/chat/completions", keyA, []byte(body+"}"))
	}
	weather := func(i int) string {
		return fmt.Sprintf(`{"type":"function","function":{"name":"get_weather_%d","description":"The weather in a city",`+
			`"parameters":{"type":"object","properties":{"city":{"type":"string","maxLength":40},"unit":{"enum":["celsius","fahrenheit"]},`+
			`"days":{"type":"integer","minimum":1,"maximum":14}},"required":["city"],"additionalProperties":false}}}`, i)
	}
	many := make([]string, toolcall.MaxTools)
	for i := range many {
		many[i] = weather(i)
	}
	// 40 tools of 4,096-value enums: past the grammar engine's 2^20
	// compiled elements somewhere in the middle.
	big := make([]string, 40)
	for i := range big {
		big[i] = enumTool(fmt.Sprintf("pick_%d", i), 4096, 5)
	}
	for _, tc := range []struct {
		name   string
		tools  []string
		choice string
		want   int
	}{
		{"128 tools", many, "", http.StatusOK},
		{"128 tools, required", many, `"required"`, http.StatusOK},
		{"an enum of 4,096 values", []string{weather(0), enumTool("pick", 4096, 12)}, "", http.StatusOK},
		{"a grammar past its cap", big, "", http.StatusBadRequest},
		{"a grammar past its cap, required", big, `"required"`, http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, b := chat(tc.tools, tc.choice)
			require.Equal(t, tc.want, code, string(b))
			if code != http.StatusBadRequest {
				return
			}
			e := errorOf(t, b)
			assert.NotContains(t, e.Message, "bad plugin config")
			m := regexp.MustCompile(`^tools\[(\d+)\]\.function\.parameters$`).FindStringSubmatch(e.Param)
			require.NotNil(t, m, "the param names a function: %q", e.Param)
			assert.True(t, strings.HasPrefix(e.Message, e.Param+": "), e.Message)
			// It is the first function at which the grammar passes the cap.
			i, _ := strconv.Atoi(m[1])
			raw := "[" + strings.Join(tc.tools, ",") + "]"
			tools, err := toolcall.ParseTools(json.RawMessage(raw), toolcall.ChatFields)
			require.NoError(t, err)
			choice := toolcall.Choice{Mode: toolcall.Auto}
			if tc.choice != "" {
				choice.Mode = toolcall.Required
			}
			_, err = toolcall.Constrain(toolcall.Hermes, tools[:i], choice, true)
			assert.NoError(t, err, "the tools before it fit")
			_, err = toolcall.Constrain(toolcall.Hermes, tools[:i+1], choice, true)
			assert.Error(t, err, "with it they do not")
		})
	}
	t.Run("a response_format schema of 4,096 values", func(t *testing.T) {
		schema := enumTool("x", 4096, 20)
		schema = schema[strings.Index(schema, `"parameters":`)+len(`"parameters":`) : len(schema)-2]
		require.Greater(t, len(schema), 64<<10, "past the host's default config cap")
		code, b := s.do(t, "POST", "/v1/chat/completions", keyA, []byte(`{"messages":[{"role":"user","content":"hi"}],"max_tokens":2,`+
			`"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":`+schema+`}}}`))
		require.Equal(t, http.StatusOK, code, string(b))
	})
	t.Run("named function past the cap", func(t *testing.T) {
		code, b := chat(append([]string{weather(0)}, enumTool("huge", 4096, 300)), `{"type":"function","function":{"name":"huge"}}`)
		require.Equal(t, http.StatusBadRequest, code, string(b))
		assert.Equal(t, "tools[1].function.parameters", errorOf(t, b).Param)
	})
	t.Run("named tool past the cap on Messages", func(t *testing.T) {
		// The same tools in Messages' form: the error names input_schema.
		messagesTool := func(chatTool string) string {
			fn := strings.TrimSuffix(strings.TrimPrefix(chatTool, `{"type":"function","function":`), "}")
			return strings.Replace(fn, `"parameters":`, `"input_schema":`, 1)
		}
		tools := messagesTool(weather(0)) + "," + messagesTool(enumTool("huge", 4096, 300))
		code, b, _ := s.anthropicDo(t, "/v1/messages", keyA, `{"max_tokens":2,"messages":[{"role":"user","content":"hi"}],"tools":[`+tools+`],"tool_choice":{"type":"tool","name":"huge"}}`)
		require.Equal(t, http.StatusBadRequest, code, string(b))
		var e anthropicError
		require.NoError(t, json.Unmarshal(b, &e))
		assert.True(t, strings.HasPrefix(e.Error.Message, "tools[1].input_schema: with this tool the tools' grammar is past its cap"), e.Error.Message)
	})
}

// TestSamplingRanges: a sampling number out of its range — the sampler's
// own, the plugins' config numbers (0 or of magnitude in [1e-15, 1e15]), or
// what the field's JSON type holds — is a 400 naming the field, the range
// and the value, never a 500 from inside a plugin's init; values at the
// edges of the ranges run.
func TestSamplingRanges(t *testing.T) {
	s := startServer(t, testTenantsFile(), 8)
	const numbers = "0 or of magnitude in [1e-15, 1e+15]"
	for _, tc := range []struct {
		name, fields, param, want string // want: in the message; "" for a 200
	}{
		{"temperature 1e308", `"temperature": 1e308`, "temperature", numbers + ", not 1e+308"},
		{"temperature past float64", `"temperature": 1e309`, "temperature", "a number of magnitude at most 1.798e+308, not 1e309"},
		{"temperature negative", `"temperature": -1`, "temperature", ">= 0, not -1"},
		{"top_p", `"top_p": 1e308`, "top_p", "in [0, 1], not 1e+308"},
		{"min_p tiny", `"min_p": 1e-16`, "min_p", numbers + ", not 1e-16"},
		{"repeat_penalty", `"repeat_penalty": 1e308`, "repeat_penalty", numbers + ", not 1e+308"},
		{"presence_penalty", `"presence_penalty": 1e308`, "presence_penalty", "in [-2, 2], not 1e+308"},
		{"frequency_penalty", `"frequency_penalty": -3`, "frequency_penalty", "in [-2, 2], not -3"},
		{"top_k past 32 bits", `"top_k": 3000000000`, "top_k", "a 32-bit integer, not 3000000000"},
		// an integer parameter given a non-integer: its own range, not int64's
		{"top_k with an exponent", `"top_k": 1e12`, "top_k", "top_k must be an integer >= 0, not 1e12"},
		{"repeat_last_n with a fraction", `"repeat_last_n": 1.5`, "repeat_last_n", "repeat_last_n must be an integer >= -1, not 1.5"},
		{"repeat_last_n a string", `"repeat_last_n": "64"`, "repeat_last_n", "repeat_last_n must be an integer >= -1, not a string"},
		{"mirostat with a fraction", `"mirostat": 0.5`, "mirostat", "mirostat must be an integer 0 or 1 (2 is the mirostat-v2 sampler), not 0.5"},
		{"dry_allowed_length with a fraction", `"dry_allowed_length": 2.5`, "dry_allowed_length", "dry_allowed_length must be an integer >= 0, not 2.5"},
		{"top_n_sigma", `"top_n_sigma": 1e308`, "top_n_sigma", numbers},
		{"xtc_probability", `"xtc_probability": 2`, "xtc_probability", "in [0, 1], not 2"},
		{"dynatemp_range", `"dynatemp_range": 1e16`, "dynatemp_range", numbers + ", not 1e+16"},
		{"dynatemp_exponent", `"dynatemp_exponent": -1`, "dynatemp_exponent", ">= 0"},
		{"mirostat", `"mirostat": 5`, "mirostat", "0, 1 or 2, not 5"},
		{"mirostat 1 tau", `"mirostat": 1, "mirostat_tau": 1e308`, "mirostat_tau", numbers},
		{"mirostat 2 eta", `"mirostat": 2, "mirostat_eta": 1e20`, "mirostat_eta", numbers + ", not 1e+20"},
		{"mirostat 2 temperature", `"mirostat": 2, "temperature": 1e300`, "temperature", numbers},
		{"dry_multiplier", `"dry_multiplier": 1e308`, "dry_multiplier", numbers},
		{"dry_base", `"dry_multiplier": 1, "dry_base": 1e300`, "dry_base", numbers},
		{"dry_allowed_length", `"dry_allowed_length": 3000000000`, "dry_allowed_length", "a 32-bit integer"},
		{"dry_penalty_last_n", `"dry_penalty_last_n": -5`, "dry_penalty_last_n", ">= -1, not -5"},
		{"logit_bias value", `"logit_bias": {"5": 1e300}`, "logit_bias", numbers + ", not 1e+300 (id 5)"},
		{"seed past 64 bits", `"seed": 18446744073709551616`, "seed", "an integer in [-9223372036854775808, 9223372036854775807]"},
		{"seed with an exponent", `"seed": 1e30`, "seed", "in digits (no fraction or exponent), not 1e30"},
		{"max_tokens past 64 bits", `"max_tokens": 99999999999999999999`, "max_tokens", "an integer in ["},
		{"logprobs", `"logprobs": 21`, "logprobs", "in [0, 20]"},

		{"temperature 1e15", `"temperature": 1e15`, "", ""},
		{"temperature 0.1+0.2", `"temperature": 0.30000000000000004, "top_p": 0.30000000000000004`, "", ""},
		{"min_p 1e-15", `"min_p": 1e-15, "top_n_sigma": 1.23456789012345e-9`, "", ""},
		{"logit_bias -1e15", `"logit_bias": {"5": -1e15}`, "", ""},
		{"mirostat 2 at the edges", `"mirostat": 2, "mirostat_tau": 1e15, "mirostat_eta": 1e-15`, "", ""},
		{"dry at the edges", `"dry_multiplier": 1e-15, "dry_base": 1e15, "dry_allowed_length": 2147483647`, "", ""},
		{"seed at the edges", `"seed": -9223372036854775808`, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, b := s.do(t, "POST", "/v1/completions", keyA, []byte(`{"prompt": "hi", "max_tokens": 2, `+tc.fields+`}`))
			if tc.want == "" {
				require.Equal(t, http.StatusOK, code, string(b))
				return
			}
			require.Equal(t, http.StatusBadRequest, code, string(b))
			e := errorOf(t, b)
			assert.Equal(t, typeInvalidRequest, e.Type)
			assert.Equal(t, tc.param, e.Param)
			assert.True(t, strings.HasPrefix(e.Message, tc.param+" must be "), e.Message)
			assert.Contains(t, e.Message, tc.want)
		})
	}
	t.Run("top_logprobs", func(t *testing.T) {
		code, b := s.do(t, "POST", "/v1/chat/completions", keyA, []byte(`{"messages": [{"role": "user", "content": "hi"}], "logprobs": true, "top_logprobs": 21}`))
		require.Equal(t, http.StatusBadRequest, code, string(b))
		assert.Equal(t, "top_logprobs", errorOf(t, b).Param)
	})
}

// TestNoGoTypesInErrors: malformed bodies of every kind — not JSON, not an
// object, fields of the wrong JSON type at every depth, numbers past their
// types, a plugin config that is not an object — are 400s whose messages
// name JSON types and request fields, never encoding/json's Go types.
func TestNoGoTypesInErrors(t *testing.T) {
	s := startServer(t, testTenantsFile(), 8)
	cmpl, chat := "/v1/completions", "/v1/chat/completions"
	user := `"messages": [{"role": "user", "content": "hi"}]`
	for _, tc := range []struct{ path, body, param string }{
		{cmpl, ``, ""},
		{cmpl, `{`, ""},
		{cmpl, `{"prompt": }`, ""},
		{cmpl, `[1, 2]`, ""},
		{cmpl, `"x"`, ""},
		{cmpl, `true`, ""},
		{cmpl, `{"prompt": "hi"} junk`, ""},
		{cmpl, `{"prompt": "hi"} {"prompt": "again"}`, ""},
		{cmpl, `{"prompt": 5}`, "prompt"},
		{cmpl, `{"prompt": [[1], "a"]}`, "prompt"},
		{cmpl, `{"prompt": "hi", "temperature": "hot"}`, "temperature"},
		{cmpl, `{"prompt": "hi", "temperature": 1e309}`, "temperature"},
		{cmpl, `{"prompt": "hi", "top_k": 1.5}`, "top_k"},
		{cmpl, `{"prompt": "hi", "seed": "x"}`, "seed"},
		{cmpl, `{"prompt": "hi", "n": {}}`, "n"},
		{cmpl, `{"prompt": "hi", "stream": "yes"}`, "stream"},
		{cmpl, `{"prompt": "hi", "logit_bias": []}`, "logit_bias"},
		{cmpl, `{"prompt": "hi", "logit_bias": {"5": "x"}}`, "logit_bias[*]"},
		{cmpl, `{"prompt": "hi", "stop": 5}`, "stop"},
		{cmpl, `{"prompt": "hi", "stop": [1]}`, "stop"},
		{cmpl, `{"prompt": "hi", "dry_sequence_breakers": [1]}`, "dry_sequence_breakers[*]"},
		{cmpl, `{"prompt": "hi", "samplers": {}}`, "samplers"},
		{cmpl, `{"prompt": "hi", "grammar": 5}`, "grammar"},
		{cmpl, `{"prompt": "hi", "realizar": []}`, "realizar"},
		{cmpl, `{"prompt": "hi", "realizar": {"processors": {}}}`, "realizar.processors"},
		{cmpl, `{"prompt": "hi", "realizar": {"processors": [5]}}`, "realizar.processors[*]"},
		{cmpl, `{"prompt": "hi", "realizar": {"processors": [{"plugin": 5}]}}`, "realizar.processors[*].plugin"},
		{cmpl, `{"prompt": "hi", "realizar": {"sampler": {"plugin": "standard", "config": []}}}`, "realizar.sampler"},
		{cmpl, `{"prompt": "hi", "realizar": {"sampler": {"plugin": "standard", "config": "x"}}}`, "realizar.sampler"},
		{cmpl, `{"prompt": "hi", "realizar": {"processors": [{"plugin": "dry", "config": [1]}]}}`, "realizar.processors[0]"},
		{cmpl, `{"prompt": "hi", "echo": 1}`, "echo"},
		{cmpl, `{"prompt": "hi", "logprobs": true}`, "logprobs"},
		{chat, `{"messages": {}}`, "messages"},
		{chat, `{"messages": [5]}`, "messages[*]"},
		{chat, `{"messages": [{"role": 1}]}`, "messages[*].role"},
		{chat, `{"messages": [{"role": "user", "content": {}}]}`, "messages[0].content"},
		{chat, `{"messages": [{"role": "user", "content": [5]}]}`, "messages[0].content"},
		{chat, `{"messages": [{"role": "user", "content": "hi", "name": 5}]}`, "messages[*].name"},
		{chat, `{"messages": [{"role": "assistant", "content": null, "tool_calls": {}}]}`, "messages[0].tool_calls"},
		{chat, `{"messages": [{"role": "assistant", "content": null, "tool_calls": [5]}]}`, "messages[0].tool_calls"},
		{chat, `{"messages": [{"role": "assistant", "content": null, "tool_calls": [{"function": 5}]}]}`, "messages[0].tool_calls"},
		{chat, `{"messages": [{"role": "tool", "tool_call_id": 5, "content": "x"}]}`, "messages[*].tool_call_id"},
		{chat, `{` + user + `, "tools": {}}`, "tools"},
		{chat, `{` + user + `, "tools": [5]}`, "tools[0]"},
		{chat, `{` + user + `, "tools": [{"type": "function", "function": []}]}`, "tools[0]"},
		{chat, `{` + user + `, "tools": [{"type": "function", "function": {"name": "f", "parameters": []}}]}`, "tools[0].function.parameters"},
		{chat, `{` + user + `, "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": 5}}}]}`, "tools[0].function.parameters"},
		{chat, `{` + user + `, "tool_choice": 5}`, "tool_choice"},
		{chat, `{` + user + `, "parallel_tool_calls": "x"}`, "parallel_tool_calls"},
		{chat, `{` + user + `, "response_format": []}`, "response_format"},
		{chat, `{` + user + `, "logprobs": "x"}`, "logprobs"},
		{chat, `{` + user + `, "top_logprobs": 1.5}`, "top_logprobs"},
		{"/tokenize", `{"content": 5}`, "content"},
		{"/tokenize", `{"content": "x", "add_special": "x"}`, "add_special"},
		{"/tokenize", `[1]`, ""},
		{"/detokenize", `{"tokens": "x"}`, "tokens"},
		{"/detokenize", `{"tokens": [1.5]}`, "tokens[*]"},
		{"/detokenize", `{"tokens": [1e20]}`, "tokens[*]"},
		{"/detokenize", `{"tokens": [99999999999]}`, "tokens[*]"},
	} {
		t.Run(tc.path+" "+tc.body, func(t *testing.T) {
			code, b := s.do(t, "POST", tc.path, keyA, []byte(tc.body))
			require.Equal(t, http.StatusBadRequest, code, string(b))
			e := errorOf(t, b)
			assert.Equal(t, tc.param, e.Param, e.Message)
			require.NotEmpty(t, e.Message)
			for _, goName := range []string{"Go ", "json.RawMessage", "map[", "struct", "[]", "server.", "int32", "int64", "float64"} {
				assert.NotContains(t, e.Message, goName)
			}
		})
	}
}
