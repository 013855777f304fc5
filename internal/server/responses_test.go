package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestResponsesStored: a stored response is its tenant's alone — another
// tenant's GET, DELETE and previous_response_id are 404s — and store
// false keeps nothing.
func TestResponsesStored(t *testing.T) {
	s := startServer(t, testTenantsFile(), 0)
	code, body := s.do(t, "POST", "/v1/responses", keyA, []byte(`{"input": "Hello", "max_output_tokens": 4, "top_k": 40}`))
	require.Equal(t, http.StatusOK, code, string(body))
	var o responseObject
	require.NoError(t, json.Unmarshal(body, &o))
	assert.True(t, strings.HasPrefix(o.ID, "resp_"), o.ID)
	assert.True(t, o.Store)

	code, body = s.do(t, "GET", "/v1/responses/"+o.ID, keyA, nil)
	require.Equal(t, http.StatusOK, code, string(body))
	for _, tc := range []struct{ method, path, body string }{
		{"GET", "/v1/responses/" + o.ID, ""},
		{"DELETE", "/v1/responses/" + o.ID, ""},
		{"POST", "/v1/responses", `{"input": "x", "max_output_tokens": 2, "previous_response_id": "` + o.ID + `"}`},
	} {
		code, body := s.do(t, tc.method, tc.path, keyB, []byte(tc.body))
		assert.Equal(t, http.StatusNotFound, code, "%s %s: %s", tc.method, tc.path, body)
		assert.NotContains(t, string(body), "Hello")
	}
	code, body = s.do(t, "POST", "/v1/responses", keyA, []byte(`{"input": "x", "max_output_tokens": 2, "previous_response_id": "`+o.ID+`"}`))
	require.Equal(t, http.StatusOK, code, string(body))
	code, _ = s.do(t, "DELETE", "/v1/responses/"+o.ID, keyA, nil)
	assert.Equal(t, http.StatusOK, code)
	code, _ = s.do(t, "GET", "/v1/responses/"+o.ID, keyA, nil)
	assert.Equal(t, http.StatusNotFound, code)

	code, body = s.do(t, "POST", "/v1/responses", keyA, []byte(`{"input": "Hello", "max_output_tokens": 2, "store": false}`))
	require.Equal(t, http.StatusOK, code, string(body))
	require.NoError(t, json.Unmarshal(body, &o))
	code, _ = s.do(t, "GET", "/v1/responses/"+o.ID, keyA, nil)
	assert.Equal(t, http.StatusNotFound, code)
}

func TestResponsesErrors(t *testing.T) {
	s := startServer(t, testTenantsFile(), 0)
	for _, tc := range []struct{ body, param string }{
		{`{}`, "input"},
		{`{"input": []}`, "input"},
		{`{"input": "x", "max_tokens": 3}`, "max_tokens"},
		{`{"input": "x", "response_format": {"type": "json_object"}}`, "response_format"},
		{`{"input": [{"type": "image"}]}`, "input[0].type"},
		{`{"input": [{"role": "tool", "content": "x"}]}`, "input[0].role"},
		{`{"input": [{"type": "function_call", "call_id": "c", "name": "f", "arguments": "{"}]}`, "input[0].arguments"},
		{`{"input": "x", "text": {"format": {"type": "yaml"}}}`, "text.format.type"},
		{`{"input": "x", "tools": [{"type": "web_search"}]}`, "tools[0].type"},
		{`{"input": "x", "background": true}`, "background"},
		{`{"input": "x", "conversation": "conv_1"}`, "conversation"},
		{`{"input": "x", "chat_template_kwargs": {"enable_thinking": false}}`, "chat_template_kwargs"},
		{`{"input": [{"type": "function_call_output", "call_id": "nope", "output": "1"}]}`, "input[0].call_id"},
	} {
		code, body := s.do(t, "POST", "/v1/responses", keyA, []byte(tc.body))
		require.Equal(t, http.StatusBadRequest, code, "%s: %s", tc.body, body)
		assert.Equal(t, tc.param, errorOf(t, body).Param, tc.body)
	}
}

// TestResponsesFormatErrors: a 400 about the Responses API's structured
// output names text.format, its own field, in its param and message —
// never response_format, the chat field it is translated to.
func TestResponsesFormatErrors(t *testing.T) {
	s := startServer(t, testTenantsFile(), 0)
	const schema = `{"type": "json_schema", "name": "n", "schema": {"not": {"minLength": 2}}}`
	for _, tc := range []struct{ name, body, param, code, message string }{
		{"schema not enforceable", `{"input": "x", "text": {"format": ` + schema + `}}`,
			"text.format", "unsupported_schema", "text.format: the schema cannot be enforced"},
		{"json_object and a grammar", `{"input": "x", "text": {"format": {"type": "json_object"}}, "grammar": "root ::= \"a\""}`,
			"text.format", "", "text.format json_object and a schema or grammar exclude each other"},
		{"two schemas", `{"input": "x", "text": {"format": {"type": "json_schema", "schema": {}}}, "json_schema": {}}`,
			"grammar", "", "give one of text.format json_schema, json_schema and grammar"},
		{"json_object and tools", `{"input": "x", "text": {"format": {"type": "json_object"}}, "tools": [{"type": "function", "name": "f", "parameters": {}}]}`,
			"tools", "", "tools (with tool_choice other than none) and text.format json_object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := s.do(t, "POST", "/v1/responses", keyA, []byte(tc.body))
			e := badRequestOf(t, code, body, tc.param, tc.code, tc.message)
			assert.NotContains(t, e.Message, "response_format")
		})
	}
}

// TestResponsesStream: the Responses event sequence, numbered, whose
// text deltas make up the completed response's text.
func TestResponsesStream(t *testing.T) {
	s := startServer(t, testTenantsFile(), 0)
	code, body := s.do(t, "POST", "/v1/responses", keyA, []byte(`{"input": "Hello", "max_output_tokens": 6, "top_k": 40, "seed": 2, "stream": true}`))
	require.Equal(t, http.StatusOK, code, string(body))
	evs := readEvents(t, body)
	var names []string
	var text strings.Builder
	for i, ev := range evs {
		names = append(names, ev.name)
		assert.Equal(t, ev.name, ev.data["type"])
		assert.InDelta(t, i, ev.data["sequence_number"], 0)
		if ev.name == "response.output_text.delta" {
			text.WriteString(ev.data["delta"].(string))
		}
	}
	require.GreaterOrEqual(t, len(names), 8, names)
	assert.Equal(t, []string{"response.created", "response.in_progress", "response.output_item.added", "response.content_part.added"}, names[:4])
	assert.Equal(t, []string{"response.output_text.done", "response.content_part.done", "response.output_item.done", "response.incomplete"}, names[len(names)-4:])
	final := evs[len(evs)-1].data["response"].(map[string]any)
	assert.Equal(t, "incomplete", final["status"])
	msg := final["output"].([]any)[0].(map[string]any)
	assert.Equal(t, text.String(), msg["content"].([]any)[0].(map[string]any)["text"])
	// The message the budget cut is incomplete, in its done event and in
	// the response, as OpenAI's is.
	assert.Equal(t, "incomplete", msg["status"])
	done := evs[len(evs)-2].data["item"].(map[string]any)
	assert.Equal(t, "incomplete", done["status"])

	// A whole response alike, and a completed one's message is completed.
	for _, tc := range []struct {
		body, status string
	}{
		{`{"input": "Hello", "max_output_tokens": 6, "seed": 2}`, "incomplete"},
		{`{"input": "Hello", "max_output_tokens": 64, "seed": 2, "stop": ["\n", ".", " "]}`, "completed"},
	} {
		code, body := s.do(t, "POST", "/v1/responses", keyA, []byte(tc.body))
		require.Equal(t, http.StatusOK, code, string(body))
		var o responseObject
		require.NoError(t, json.Unmarshal(body, &o))
		require.Equal(t, tc.status, o.Status, string(body))
		require.NotEmpty(t, o.Output)
		assert.Equal(t, tc.status, o.Output[len(o.Output)-1].Status, string(body))
	}
}

// FuzzAPIRequests: the Messages and Responses translations never panic
// on any body, and what they accept is valid chat input (a translated
// message's content is a JSON string); the template variables
// (chat_template_kwargs, thinking, reasoning_effort) never panic, stay
// within their bound and never replace a variable of the server's.
func FuzzAPIRequests(f *testing.F) {
	f.Add([]byte(`{"system": "s", "messages": [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": [{"type": "text", "text": "x"}]}]}], "tools": [{"name": "f", "input_schema": {}}], "tool_choice": {"type": "tool", "name": "f"}}`))
	f.Add([]byte(`{"input": [{"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"}, {"type": "function_call_output", "call_id": "c", "output": "1"}], "text": {"format": {"type": "json_schema", "schema": {}}}}`))
	f.Add([]byte(`{"max_tokens": 2000, "thinking": {"type": "enabled", "budget_tokens": 1024}, "chat_template_kwargs": {"enable_thinking": false, "x": [1]}, "reasoning_effort": "low"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var m messagesRequest
		if json.Unmarshal(b, &m) == nil {
			_, _ = anthropicText(m.System, "system")
			for i, msg := range m.Messages {
				if out, err := anthropicToChat(msg, fmt.Sprint(i)); err == nil {
					for _, c := range out {
						var s string
						require.NoError(t, json.Unmarshal(c.Content, &s))
					}
				}
			}
			_, _ = anthropicTools(m.Tools)
			_, _, _ = anthropicToolChoice(m.ToolChoice, m.Tools)
			if on, err := anthropicThinking(m.Thinking, m.MaxTokens); err == nil && on != nil {
				vars := withThinking(nil, *on)
				require.Equal(t, fmt.Sprint(*on), string(vars[enableThinking]))
			}
		}
		var c chatRequest
		if json.Unmarshal(b, &c) == nil {
			if vars, err := templateKwargs(c.ChatTemplateKwargs); err == nil {
				require.LessOrEqual(t, len(vars), maxTemplateKwargs)
				for k := range vars {
					require.False(t, serverVars[k], "a server variable replaced: %s", k)
				}
				_, _ = withReasoningEffort(vars, c.ReasoningEffort, "reasoning_effort")
			}
		}
		var r responsesRequest
		if json.Unmarshal(b, &r) == nil {
			if items, err := responsesInput(r.Input, map[string]bool{}); err == nil {
				for _, c := range itemsToChat(items) {
					var s string
					require.NoError(t, json.Unmarshal(c.Content, &s))
				}
			}
			_, _ = responsesTools(r.Tools)
			_, _ = responsesToolChoice(r.ToolChoice)
			_, _, _ = responsesFormat(r.Text)
		}
	})
}
