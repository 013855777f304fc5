package server

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestIgnoreEOSStructured: every structured output with "ignore_eos":
// true is a 400 naming ignore_eos and the field it conflicts with (the
// CLI's rule, chain.Spec.CheckIgnoreEOG): the output ends with an
// end-of-generation token, which ignore_eos masks. Before, a schema or
// grammar ran into a 422 no_token_allowed and json_object padded the
// answer with whitespace up to max_tokens.
func TestIgnoreEOSStructured(t *testing.T) {
	s := startServer(t, testTenantsFile(), 64)
	user := `"max_tokens": 8, "ignore_eos": true, "messages": [{"role": "user", "content": "hi"}]`
	tools := `[{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]`
	schema := `{"type": "object", "properties": {"a": {"type": "integer"}}}`
	for _, tc := range []struct{ name, path, body, with string }{
		{"json_object", "/v1/chat/completions", `{` + user + `, "response_format": {"type": "json_object"}}`, "response_format"},
		{"json_schema", "/v1/chat/completions", `{` + user + `, "response_format": {"type": "json_schema", "json_schema": {"name": "n", "schema": ` + schema + `}}}`, "response_format"},
		{"llama-server json_schema", "/v1/chat/completions", `{` + user + `, "json_schema": ` + schema + `}`, "json_schema"},
		{"grammar", "/v1/chat/completions", `{` + user + `, "grammar": "root ::= \"a\""}`, "grammar"},
		{"completion grammar", "/v1/completions", `{"prompt": "x", "max_tokens": 8, "ignore_eos": true, "grammar": "root ::= \"a\""}`, "grammar"},
		{"tools required", "/v1/chat/completions", `{` + user + `, "tools": ` + tools + `, "tool_choice": "required"}`, "tools"},
		{"tools named", "/v1/chat/completions", `{` + user + `, "tools": ` + tools + `, "tool_choice": {"type": "function", "function": {"name": "f"}}}`, "tools"},
		// under auto a call, once started, ends the turn alike
		{"tools auto", "/v1/chat/completions", `{` + user + `, "tools": ` + tools + `}`, "tools"},
		{"responses text.format", "/v1/responses", `{"input": "hi", "max_output_tokens": 8, "ignore_eos": true, "text": {"format": {"type": "json_schema", "name": "n", "schema": ` + schema + `}}}`, "text.format"},
		{"messages output_format", "/v1/messages", `{` + user + `, "output_format": {"type": "json_schema", "schema": ` + schema + `}}`, "output_format"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := s.do(t, "POST", tc.path, keyA, []byte(tc.body))
			require.Equal(t, http.StatusBadRequest, code, string(body))
			e := errorOf(t, body)
			assert.Equal(t, typeInvalidRequest, e.Type, string(body))
			if tc.path != "/v1/messages" { // Anthropic's error has no param
				assert.Equal(t, "ignore_eos", e.Param, string(body))
			}
			assert.Contains(t, e.Message, "ignore_eos cannot go with "+tc.with)
		})
	}
	// without ignore_eos (or with it false) the same request runs
	code, body := s.do(t, "POST", "/v1/chat/completions", keyA,
		[]byte(`{"max_tokens": 4, "ignore_eos": false, "messages": [{"role": "user", "content": "hi"}], "response_format": {"type": "json_object"}}`))
	assert.Equal(t, http.StatusOK, code, string(body))
}
