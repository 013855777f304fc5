package server

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// anthropicDo posts body to path with x-api-key (none when empty) and
// anthropic-version, and returns the status and body.
func (s *testServer) anthropicDo(t testing.TB, path, key, body string) (int, []byte, http.Header) {
	req, err := http.NewRequest("POST", s.URL+path, strings.NewReader(body))
	require.NoError(t, err)
	if key != "" {
		req.Header.Set("x-api-key", key)
	}
	req.Header.Set("anthropic-version", "2023-06-01")
	req.Header.Set("content-type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var b bytes.Buffer
	_, err = b.ReadFrom(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, b.Bytes(), resp.Header
}

// sseEvent is one server-sent event: its name and data.
type sseEvent struct {
	name string
	data map[string]any
}

// readEvents splits an SSE body into events.
func readEvents(t testing.TB, body []byte) []sseEvent {
	var out []sseEvent
	var cur sseEvent
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			require.NoError(t, json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &cur.data), line)
		case line == "":
			if cur.name != "" || cur.data != nil {
				out = append(out, cur)
			}
			cur = sseEvent{}
		}
	}
	return out
}

func TestMessagesErrors(t *testing.T) {
	s := startServer(t, testTenantsFile(), 0)
	for _, tc := range []struct {
		name, key, body string
		status          int
		typ, contains   string
	}{
		{"no max_tokens", keyA, `{"messages": [{"role": "user", "content": "hi"}]}`, 400, "invalid_request_error", "max_tokens"},
		{"no messages", keyA, `{"max_tokens": 4, "messages": []}`, 400, "invalid_request_error", "messages"},
		{"bad role", keyA, `{"max_tokens": 4, "messages": [{"role": "system", "content": "hi"}]}`, 400, "invalid_request_error", "role"},
		{"image block", keyA, `{"max_tokens": 4, "messages": [{"role": "user", "content": [{"type": "image"}]}]}`, 400, "invalid_request_error", "image"},
		{"bad tool_choice", keyA, `{"max_tokens": 4, "messages": [{"role": "user", "content": "hi"}], "tool_choice": {"type": "maybe"}}`, 400, "invalid_request_error", "tool_choice"},
		{"chat_template_kwargs", keyA, `{"max_tokens": 4, "messages": [{"role": "user", "content": "hi"}], "chat_template_kwargs": {"enable_thinking": false}}`, 400, "invalid_request_error", "chat_template_kwargs is chat completions' field; the Messages API sets the template's thinking with thinking"},
		{"tool_result without a call", keyA, `{"max_tokens": 4, "messages": [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_x", "content": "1"}]}]}`, 400, "invalid_request_error", "toolu_x"},
		{"tool_choice of no tool", keyA, `{"max_tokens": 4, "messages": [{"role": "user", "content": "hi"}], "tools": [{"name": "f", "input_schema": {"type": "object"}}], "tool_choice": {"type": "tool", "name": "g"}}`, 400, "invalid_request_error", `tool_choice.name "g"`},
		{"tool_choice without a name", keyA, `{"max_tokens": 4, "messages": [{"role": "user", "content": "hi"}], "tools": [{"name": "f", "input_schema": {"type": "object"}}], "tool_choice": {"type": "tool"}}`, 400, "invalid_request_error", "tool_choice.name"},
		// Tools' errors name the Messages paths, not chat's tools[i].function.*.
		{"bad tool name", keyA, `{"max_tokens": 4, "messages": [{"role": "user", "content": "hi"}], "tools": [{"name": "no spaces", "input_schema": {"type": "object"}}]}`, 400, "invalid_request_error", `tools[0].name: name "no spaces" must be`},
		{"tool twice", keyA, `{"max_tokens": 4, "messages": [{"role": "user", "content": "hi"}], "tools": [{"name": "f", "input_schema": {"type": "object"}}, {"name": "f", "input_schema": {"type": "object"}}]}`, 400, "invalid_request_error", `tools[1].name: tool "f" is defined twice`},
		{"input_schema not a schema", keyA, `{"max_tokens": 4, "messages": [{"role": "user", "content": "hi"}], "tools": [{"name": "f", "input_schema": [1]}]}`, 400, "invalid_request_error", "tools[0].input_schema: "},
		{"output_format not json_schema", keyA, `{"max_tokens": 4, "messages": [{"role": "user", "content": "hi"}], "output_format": {"type": "text"}}`, 400, "invalid_request_error", `output_format type "text" is not json_schema`},
		{"output_format without a schema", keyA, `{"max_tokens": 4, "messages": [{"role": "user", "content": "hi"}], "output_format": {"type": "json_schema"}}`, 400, "invalid_request_error", "output_format json_schema needs its schema"},
		{"output_format not enforceable", keyA, `{"max_tokens": 4, "messages": [{"role": "user", "content": "hi"}], "output_format": {"type": "json_schema", "schema": {"type": "array", "uniqueItems": true}}}`, 400, "invalid_request_error", "output_format: the schema cannot be enforced"},
		{"output_format and response_format", keyA, `{"max_tokens": 4, "messages": [{"role": "user", "content": "hi"}], "output_format": {"type": "json_schema", "schema": {}}, "response_format": {"type": "json_object"}}`, 400, "invalid_request_error", "give one of output_format and response_format"},
		{"output_format and a grammar", keyA, `{"max_tokens": 4, "messages": [{"role": "user", "content": "hi"}], "output_format": {"type": "json_schema", "schema": {}}, "grammar": "root ::= \"a\""}`, 400, "invalid_request_error", "give one of output_format json_schema, json_schema and grammar"},
		{"input_schema not enforceable", keyA, `{"max_tokens": 4, "messages": [{"role": "user", "content": "hi"}], "tools": [{"name": "f", "input_schema": {"type": "array", "uniqueItems": true}}]}`, 400, "invalid_request_error", "tools[0].input_schema: "},
		{"no key", "", `{"max_tokens": 4, "messages": [{"role": "user", "content": "hi"}]}`, 401, "authentication_error", "x-api-key"},
		{"bad key", "sk-nobody", `{"max_tokens": 4, "messages": [{"role": "user", "content": "hi"}]}`, 401, "authentication_error", "invalid"},
		{"unknown model", keyA, `{"model": "claude-x", "max_tokens": 4, "messages": [{"role": "user", "content": "hi"}]}`, 404, "not_found_error", "claude-x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body, _ := s.anthropicDo(t, "/v1/messages", tc.key, tc.body)
			require.Equal(t, tc.status, code, string(body))
			var e anthropicError
			require.NoError(t, json.Unmarshal(body, &e), string(body))
			assert.Equal(t, "error", e.Type)
			assert.Equal(t, tc.typ, e.Error.Type)
			assert.Contains(t, e.Error.Message, tc.contains)
			assert.NotContains(t, e.Error.Message, ".function.", "chat's paths")
		})
	}
	// Both kinds of key header: a 400, whichever is right.
	req, err := http.NewRequest("POST", s.URL+"/v1/messages", strings.NewReader(`{}`))
	require.NoError(t, err)
	req.Header.Set("x-api-key", keyA)
	req.Header.Set("Authorization", "Bearer "+keyA)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
}

// TestMessagesOutputFormat: Anthropic's output_format json_schema holds
// the text to its schema, at any seed, as chat's response_format does.
func TestMessagesOutputFormat(t *testing.T) {
	s := startServer(t, testTenantsFile(), 0)
	for seed := 1; seed <= 3; seed++ {
		code, body, _ := s.anthropicDo(t, "/v1/messages", keyA, fmt.Sprintf(`{"max_tokens": 40, "temperature": 1, "seed": %d,
			"messages": [{"role": "user", "content": "A digit."}], "output_format": {"type": "json_schema",
			"schema": {"type": "object", "properties": {"n": {"type": "integer", "minimum": 0, "maximum": 9}}, "required": ["n"], "additionalProperties": false}}}`, seed))
		require.Equal(t, http.StatusOK, code, string(body))
		var m anthropicMessageOut
		require.NoError(t, json.Unmarshal(body, &m))
		require.Len(t, m.Content, 1)
		require.NotNil(t, m.Content[0].Text)
		text := *m.Content[0].Text
		var v struct {
			N *int `json:"n"`
		}
		dec := json.NewDecoder(strings.NewReader(text))
		dec.DisallowUnknownFields()
		require.NoError(t, dec.Decode(&v), text)
		require.NotNil(t, v.N, text)
		assert.True(t, *v.N >= 0 && *v.N <= 9, text)
	}
}

func TestMessages(t *testing.T) {
	s := startServer(t, testTenantsFile(), 0)
	const req = `{"model": "serve-fixture", "max_tokens": 8, "system": [{"type": "text", "text": "Be brief."}],
		"messages": [{"role": "user", "content": "Hello"}, {"role": "assistant", "content": [{"type": "text", "text": "Hi."}]},
		{"role": "user", "content": [{"type": "text", "text": "Tell me a story."}]}],
		"temperature": 0.7, "top_p": 0.9, "top_k": 40, "seed": 3, "metadata": {"user_id": "u1"}%s}`
	code, body, h := s.anthropicDo(t, "/v1/messages", keyA, strings.Replace(req, "%s", "", 1))
	require.Equal(t, http.StatusOK, code, string(body))
	assert.NotEmpty(t, h.Get("X-Realizar-Queue-Ms"))
	var m anthropicMessageOut
	require.NoError(t, json.Unmarshal(body, &m))
	assert.Equal(t, "message", m.Type)
	assert.Equal(t, "assistant", m.Role)
	assert.True(t, strings.HasPrefix(m.ID, "msg_"), m.ID)
	require.Len(t, m.Content, 1)
	assert.Equal(t, "text", m.Content[0].Type)
	require.NotNil(t, m.StopReason)
	assert.Contains(t, []string{"end_turn", "max_tokens"}, *m.StopReason)
	assert.Greater(t, m.Usage.InputTokens, 5)
	assert.Positive(t, m.Usage.OutputTokens)
	require.NotNil(t, m.Realizar)

	// The same seed streamed: Anthropic's event sequence, whose text
	// deltas make up the same text.
	code, body, _ = s.anthropicDo(t, "/v1/messages", keyA, strings.Replace(req, "%s", `, "stream": true`, 1))
	require.Equal(t, http.StatusOK, code, string(body))
	evs := readEvents(t, body)
	var names []string
	var text strings.Builder
	for _, ev := range evs {
		names = append(names, ev.name)
		assert.Equal(t, ev.name, ev.data["type"])
		if ev.name == "content_block_delta" {
			d := ev.data["delta"].(map[string]any)
			assert.Equal(t, "text_delta", d["type"])
			text.WriteString(d["text"].(string))
		}
	}
	require.GreaterOrEqual(t, len(names), 6, names)
	assert.Equal(t, []string{"message_start", "ping", "content_block_start"}, names[:3])
	assert.Equal(t, []string{"content_block_stop", "message_delta", "message_stop"}, names[len(names)-3:])
	assert.Equal(t, *m.Content[0].Text, text.String())
	md := evs[len(evs)-2].data
	assert.Equal(t, *m.StopReason, md["delta"].(map[string]any)["stop_reason"])
	assert.InDelta(t, m.Usage.OutputTokens, md["usage"].(map[string]any)["output_tokens"], 0)
	start := evs[0].data["message"].(map[string]any)
	assert.InDelta(t, m.Usage.InputTokens, start["usage"].(map[string]any)["input_tokens"], 0)

	// count_tokens counts the same prompt.
	code, body, _ = s.anthropicDo(t, "/v1/messages/count_tokens", keyA, strings.Replace(req, "%s", "", 1))
	require.Equal(t, http.StatusOK, code, string(body))
	var ct struct {
		InputTokens int `json:"input_tokens"`
	}
	require.NoError(t, json.Unmarshal(body, &ct))
	assert.Equal(t, m.Usage.InputTokens, ct.InputTokens)

	// Bearer authentication works too.
	st, b := s.do(t, "POST", "/v1/messages", keyB, []byte(`{"max_tokens": 2, "messages": [{"role": "user", "content": "x"}]}`))
	assert.Equal(t, http.StatusOK, st, string(b))
}

// TestMessagesStopSequence: a stop sequence that the turn's text holds
// ends it with stop_reason stop_sequence, naming it; max_tokens reached
// is stop_reason max_tokens.
func TestMessagesStopSequence(t *testing.T) {
	s := startServer(t, testTenantsFile(), 0)
	base := `{"max_tokens": 12, "seed": 5, "top_k": 1, "messages": [{"role": "user", "content": "Once upon a time"}]`
	code, body, _ := s.anthropicDo(t, "/v1/messages", keyA, base+`}`)
	require.Equal(t, http.StatusOK, code, string(body))
	var m anthropicMessageOut
	require.NoError(t, json.Unmarshal(body, &m))
	text := *m.Content[0].Text
	require.GreaterOrEqual(t, len(text), 4, "the fixture's greedy text")
	assert.Equal(t, "max_tokens", *m.StopReason)
	stop := text[len(text)/2 : len(text)/2+2]
	stopJSON, _ := json.Marshal([]string{"\u0000never", stop})
	code, body, _ = s.anthropicDo(t, "/v1/messages", keyA, base+`, "stop_sequences": `+string(stopJSON)+`}`)
	require.Equal(t, http.StatusOK, code, string(body))
	m = anthropicMessageOut{}
	require.NoError(t, json.Unmarshal(body, &m))
	assert.Equal(t, "stop_sequence", *m.StopReason)
	require.NotNil(t, m.StopSequence)
	assert.Equal(t, stop, *m.StopSequence)
	assert.Equal(t, text[:strings.Index(text, stop)], *m.Content[0].Text)
}

// TestMessagesTools: with tool_choice any, a Hermes-family model's turn is
// one tool_use block whose input validates, stop_reason tool_use,
// streamed (input_json_delta parts joined are the input) and not; the
// call fed back with a tool_result renders and answers.
func TestMessagesTools(t *testing.T) {
	r := testSandbox(t)
	s := startServerWith(t, testTenantsFile(), Config{}, withToolModel(t, readHFTemplate(t, "Qwen-Qwen2.5-7B-Instruct.jinja"), r))
	tools := `[{"name": "get_weather", "description": "The weather in a city", "input_schema": ` + toolSchema + `}]`
	req := `{"max_tokens": 160, "seed": 1, "top_k": 40, "tools": ` + tools + `, "tool_choice": {"type": "any"},
		"messages": [{"role": "user", "content": "What is the weather in Paris?"}]%s}`
	code, body, _ := s.anthropicDo(t, "/v1/messages", keyA, strings.Replace(req, "%s", "", 1))
	require.Equal(t, http.StatusOK, code, string(body))
	var m anthropicMessageOut
	require.NoError(t, json.Unmarshal(body, &m))
	assert.Equal(t, "tool_use", *m.StopReason, string(body))
	require.Len(t, m.Content, 1, string(body))
	call := m.Content[0]
	assert.Equal(t, "tool_use", call.Type)
	assert.Equal(t, "get_weather", call.Name)
	assert.True(t, strings.HasPrefix(call.ID, "toolu_"), call.ID)
	var input map[string]any
	require.NoError(t, json.Unmarshal(call.Input, &input))
	assert.Contains(t, input, "city")

	code, body, _ = s.anthropicDo(t, "/v1/messages", keyA, strings.Replace(req, "%s", `, "stream": true`, 1))
	require.Equal(t, http.StatusOK, code, string(body))
	var partial strings.Builder
	var stop any
	for _, ev := range readEvents(t, body) {
		switch ev.name {
		case "content_block_start":
			assert.Equal(t, "tool_use", ev.data["content_block"].(map[string]any)["type"])
		case "content_block_delta":
			d := ev.data["delta"].(map[string]any)
			require.Equal(t, "input_json_delta", d["type"])
			partial.WriteString(d["partial_json"].(string))
		case "message_delta":
			stop = ev.data["delta"].(map[string]any)["stop_reason"]
		}
	}
	assert.Equal(t, "tool_use", stop)
	assert.JSONEq(t, string(call.Input), partial.String())

	history := `{"max_tokens": 8, "seed": 1, "top_k": 40, "tools": ` + tools + `, "messages": [
		{"role": "user", "content": "What is the weather in Paris?"},
		{"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": ` + string(call.Input) + `}]},
		{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "22 C"}]}]}]}`
	code, body, _ = s.anthropicDo(t, "/v1/messages", keyA, history)
	require.Equal(t, http.StatusOK, code, string(body))
}
