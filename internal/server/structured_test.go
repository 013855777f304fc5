package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const structuredSchema = `{"type":"object","properties":{"color":{"enum":["red","green","blue"]},` +
	`"size":{"type":"integer","minimum":1,"maximum":9},"tags":{"type":"array","items":{"type":"string","maxLength":4},"maxItems":2}},` +
	`"required":["color","size"],"additionalProperties":false}`

// TestE2EStructuredOutputs: response_format json_schema on chat and
// llama.cpp's json_schema on completions return JSON valid against the
// schema (santhosh-tekuri/jsonschema) at every seed and temperature of the
// JSON-mode tests, ended by end of generation; llama.cpp's grammar field
// matches its grammar; the grammar processor runs before the sampler.
func TestE2EStructuredOutputs(t *testing.T) {
	s := startServer(t, testTenantsFile(), 64)
	var doc any
	require.NoError(t, json.Unmarshal([]byte(structuredSchema), &doc))
	c := jsonschema.NewCompiler()
	require.NoError(t, c.AddResource("s.json", doc))
	v, err := c.Compile("s.json")
	require.NoError(t, err)
	for _, run := range jsonRuns {
		t.Run(fmt.Sprintf("chat/seed=%d/temperature=%v", run.seed, run.temp), func(t *testing.T) {
			body := fmt.Sprintf(`{"messages":[{"role":"user","content":"A cat as JSON."}],"max_tokens":200,"seed":%d,"temperature":%v,`+
				`"response_format":{"type":"json_schema","json_schema":{"name":"cat","strict":true,"schema":%s}}}`, run.seed, run.temp, structuredSchema)
			code, resp := s.do(t, "POST", "/v1/chat/completions", keyA, []byte(body))
			require.Equal(t, http.StatusOK, code, string(resp))
			var r chatResponse
			require.NoError(t, json.Unmarshal(resp, &r))
			require.Len(t, r.Choices, 1)
			content := *r.Choices[0].Message.Content
			assert.Equal(t, "stop", *r.Choices[0].FinishReason)
			inst, err := jsonschema.UnmarshalJSON(strings.NewReader(content))
			require.NoError(t, err, "%q", content)
			assert.NoError(t, v.Validate(inst), "%q", content)
			require.NotNil(t, r.Realizar)
			require.Len(t, r.Realizar.Policies, 2)
			assert.Contains(t, r.Realizar.Policies[0], "grammar")
		})
		t.Run(fmt.Sprintf("completions/seed=%d/temperature=%v", run.seed, run.temp), func(t *testing.T) {
			body := fmt.Sprintf(`{"prompt":"Once upon a time","max_tokens":200,"seed":%d,"temperature":%v,"json_schema":%s}`, run.seed, run.temp, structuredSchema)
			code, resp := s.do(t, "POST", "/v1/completions", keyA, []byte(body))
			require.Equal(t, http.StatusOK, code, string(resp))
			var r completionResponse
			require.NoError(t, json.Unmarshal(resp, &r))
			inst, err := jsonschema.UnmarshalJSON(strings.NewReader(r.Choices[0].Text))
			require.NoError(t, err, "%q", r.Choices[0].Text)
			assert.NoError(t, v.Validate(inst), "%q", r.Choices[0].Text)
		})
		t.Run(fmt.Sprintf("grammar/seed=%d/temperature=%v", run.seed, run.temp), func(t *testing.T) {
			body := fmt.Sprintf(`{"prompt":"Once","max_tokens":60,"seed":%d,"temperature":%v,"grammar":%q}`, run.seed, run.temp,
				`root ::= ("yes" | "no") ", " [a-z]{1,5} "."`)
			code, resp := s.do(t, "POST", "/v1/completions", keyA, []byte(body))
			require.Equal(t, http.StatusOK, code, string(resp))
			var r completionResponse
			require.NoError(t, json.Unmarshal(resp, &r))
			assert.Regexp(t, `^(yes|no), [a-z]{1,5}\.$`, r.Choices[0].Text)
		})
	}
	for _, tc := range []struct{ name, body, param, code, says string }{
		{"refused keyword", `{"prompt":"x","json_schema":{"not":{"minLength":2}}}`, "json_schema", "unsupported_schema", "not"},
		{"malformed grammar", `{"prompt":"x","grammar":"root ::= (\"a\""}`, "grammar", "invalid_grammar", "line 1"},
		{"two at once", `{"prompt":"x","grammar":"root ::= \"a\"","json_schema":{}}`, "grammar", "", ""},
		// a config the plugin refuses at init is the client's error, a 400
		// naming the field, as the top-level grammar
		{"malformed grammar as a processor", `{"prompt":"x","realizar":{"processors":[{"plugin":"grammar","config":{"grammar":"root ::= [a"}}]}}`,
			"realizar.processors[0]", "invalid_plugin_config", "grammar"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, resp := s.do(t, "POST", "/v1/completions", keyA, []byte(tc.body))
			badRequestOf(t, code, resp, tc.param, tc.code, tc.says)
		})
	}
}

// TestE2ENestedRepetitionGrammars: the nested counted repetitions that
// once made the grammar processor's mask and matcher disagree (a 500
// plugin_error) answer 200 with text the grammar matches.
func TestE2ENestedRepetitionGrammars(t *testing.T) {
	s := startServer(t, testTenantsFile(), 64)
	for _, tc := range []struct{ grammar, re string }{
		{`root ::= ("a"{0,300}){0,300}`, `^a*$`},
		{`root ::= ("ab"{0,300}){0,300}`, `^(ab)*$`},
		{"root ::= r{0,300} \"b\"\nr ::= \"ab\"{0,300}", `^(ab)*b$`},
	} {
		for _, seed := range []int{1, 2, 3} {
			t.Run(fmt.Sprintf("%s/seed=%d", tc.grammar, seed), func(t *testing.T) {
				body := fmt.Sprintf(`{"prompt":"Once","max_tokens":48,"seed":%d,"temperature":1.5,"grammar":%q}`, seed, tc.grammar)
				code, resp := s.do(t, "POST", "/v1/completions", keyA, []byte(body))
				require.Equal(t, http.StatusOK, code, string(resp))
				var r completionResponse
				require.NoError(t, json.Unmarshal(resp, &r))
				assert.Regexp(t, tc.re, r.Choices[0].Text)
			})
		}
	}
}

// TestE2EStructuredClosesWithinMaxTokens: a json_schema turn at
// temperature 1.5 cut by a small max_tokens still returns JSON valid
// against the schema (the grammar processor closes it in time) and ends
// with finish_reason "stop".
func TestE2EStructuredClosesWithinMaxTokens(t *testing.T) {
	s := startServer(t, testTenantsFile(), 64)
	schema := `{"type":"object","properties":{"s":{"type":"string"},"l":{"type":"array","items":{"type":"string"}}},"required":["s","l"]}`
	var doc any
	require.NoError(t, json.Unmarshal([]byte(schema), &doc))
	c := jsonschema.NewCompiler()
	require.NoError(t, c.AddResource("s.json", doc))
	v, err := c.Compile("s.json")
	require.NoError(t, err)
	for seed := 1; seed <= 5; seed++ {
		body := fmt.Sprintf(`{"messages":[{"role":"user","content":"A story as JSON."}],"max_tokens":24,"seed":%d,"temperature":1.5,`+
			`"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":%s}}}`, seed, schema)
		code, resp := s.do(t, "POST", "/v1/chat/completions", keyA, []byte(body))
		require.Equal(t, http.StatusOK, code, string(resp))
		var r chatResponse
		require.NoError(t, json.Unmarshal(resp, &r))
		content := *r.Choices[0].Message.Content
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(content))
		require.NoError(t, err, "seed %d: %q (%s)", seed, content, *r.Choices[0].FinishReason)
		assert.NoError(t, v.Validate(inst), "%q", content)
		// the budget's last token is kept for end of generation: a
		// complete value is a "stop", which clients parse
		assert.Equal(t, "stop", *r.Choices[0].FinishReason, "seed %d: %q", seed, content)
	}
}

// TestSchemaWarnings: a JSON Schema format that JSON Schema does not
// define is accepted as an annotation (the turn runs under the schema
// without it) and named in the response's realizar.warnings, after the
// field whose schema has it, by its API's name: response_format, Responses'
// text.format, Messages' output_format, llama.cpp's json_schema, a
// Messages tool's input_schema, a cached compile as the first; a schema
// without one has no warnings.
func TestSchemaWarnings(t *testing.T) {
	s := startServer(t, testTenantsFile(), 64)
	const schema = `{"type":"object","properties":{"n":{"type":"integer","format":"int32","minimum":0,"maximum":9}},"required":["n"],"additionalProperties":false}`
	const said = `format "int32" at #/properties/n is not enforced: JSON Schema defines no such format (an annotation)`
	realizar := func(t *testing.T, resp []byte) *realizarResponse {
		var r struct {
			Realizar *realizarResponse `json:"realizar"`
		}
		require.NoError(t, json.Unmarshal(resp, &r), string(resp))
		require.NotNil(t, r.Realizar, string(resp))
		return r.Realizar
	}
	chat := `{"messages":[{"role":"user","content":"A number."}],"max_tokens":20,"response_format":{"type":"json_schema","json_schema":{"name":"n","schema":` + schema + `}}}`
	for _, tc := range []struct{ name, path, body, want string }{
		{"response_format", "/v1/chat/completions", chat, "response_format: " + said},
		{"response_format, compiled before", "/v1/chat/completions", chat, "response_format: " + said},
		{"Responses text.format", "/v1/responses", `{"input":"A number.","max_output_tokens":20,"text":{"format":{"type":"json_schema","name":"n","schema":` + schema + `}}}`,
			"text.format: " + said},
		{"json_schema", "/v1/completions", `{"prompt":"x","max_tokens":20,"json_schema":` + schema + `}`, "json_schema: " + said},
		{"Messages output_format", "/v1/messages", `{"max_tokens":20,"messages":[{"role":"user","content":"A number."}],"output_format":{"type":"json_schema","schema":` + schema + `}}`,
			"output_format: " + said},
		{"Messages tool", "/v1/messages", `{"max_tokens":4,"messages":[{"role":"user","content":"hi"}],"tools":[{"name":"f","input_schema":` + schema + `}]}`,
			"tools[0].input_schema: " + said},
		{"chat tool", "/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"max_tokens":4,"tools":[{"type":"function","function":{"name":"f","parameters":` + schema + `}}]}`,
			"tools[0].function.parameters: " + said},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var code int
			var resp []byte
			if tc.path == "/v1/messages" {
				code, resp, _ = s.anthropicDo(t, tc.path, keyA, tc.body)
			} else {
				code, resp = s.do(t, "POST", tc.path, keyA, []byte(tc.body))
			}
			require.Equal(t, http.StatusOK, code, string(resp))
			assert.Equal(t, []string{tc.want}, realizar(t, resp).Warnings)
		})
	}
	t.Run("none", func(t *testing.T) {
		code, resp := s.do(t, "POST", "/v1/chat/completions", keyA, []byte(strings.Replace(chat, `"format":"int32",`, "", 1)))
		require.Equal(t, http.StatusOK, code, string(resp))
		assert.Nil(t, realizar(t, resp).Warnings)
		assert.NotContains(t, string(resp), `"warnings"`)
	})
}
