package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestThinkSplit(t *testing.T) {
	for _, tc := range []struct {
		name               string
		open               bool // the prompt opened the block
		pieces             []string
		reasoning, content string
	}{
		{"no block", false, []string{"Hello", " world"}, "", "Hello world"},
		{"a block", false, []string{"<think>", "I think", "</think>", "\n\nAnswer"}, "I think", "Answer"},
		{"tags split across pieces", false, []string{" <th", "ink>a", "b</th", "ink", ">  c"}, "ab", "c"},
		{"opened by the prompt", true, []string{"why", "</think>", "so"}, "why", "so"},
		{"a later tag is content", false, []string{"x <think>y</think>"}, "", "x <think>y</think>"},
		{"an unclosed block is reasoning", false, []string{"<think>still </thi"}, "still </thi", ""},
		{"a prefix of the tag that is not one", false, []string{"<thin", "g>"}, "", "<thing>"},
		{"only space", false, []string{"  "}, "", "  "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sp := &thinkSplit{in: tc.open}
			var r, c string
			for _, p := range tc.pieces {
				dr, dc := sp.feed(p, false)
				r, c = r+dr, c+dc
			}
			dr, dc := sp.feed("", true)
			assert.Equal(t, tc.reasoning, r+dr)
			assert.Equal(t, tc.content, c+dc)
			// Whole, in one piece, the same.
			whole := ""
			for _, p := range tc.pieces {
				whole += p
			}
			wr, wc := (&thinkSplit{in: tc.open}).feed(whole, true)
			assert.Equal(t, tc.reasoning, wr)
			assert.Equal(t, tc.content, wc)
		})
	}
}

func FuzzThinkSplit(f *testing.F) {
	f.Add("<think>a</think>b", 3)
	f.Add(" <th", 1)
	f.Fuzz(func(t *testing.T, s string, cut int) {
		if cut < 0 || cut > len(s) {
			return
		}
		a := &thinkSplit{}
		r1, c1 := a.feed(s[:cut], false)
		r2, c2 := a.feed(s[cut:], false)
		r3, c3 := a.feed("", true)
		wr, wc := (&thinkSplit{}).feed(s, true)
		assert.Equal(t, wr, r1+r2+r3)
		assert.Equal(t, wc, c1+c2+c3)
	})
}

// thinkGrammar forces a reasoning block, then a short answer.
const thinkGrammar = `root ::= "<think>" x x? x? "</think>" x x? x?
x ::= [a-z]`

// TestChatReasoning: on a model whose template thinks (Qwen3's), a
// <think>…</think> block the grammar forces lands in reasoning_content
// and not in content, streamed and not; reasoning_format none leaves it
// in content.
func TestChatReasoning(t *testing.T) {
	r := testSandbox(t)
	s := startServerWith(t, testTenantsFile(), Config{}, withToolModel(t, readHFTemplate(t, "Qwen-Qwen3-0.6B.jinja"), r))
	body := func(extra string) []byte {
		g, _ := json.Marshal(thinkGrammar)
		return []byte(`{"messages": [{"role": "user", "content": "Think, then answer."}], "max_tokens": 40, "seed": 4,
			"top_k": 40, "grammar": ` + string(g) + extra + `}`)
	}
	code, b := s.do(t, "POST", "/v1/chat/completions", keyA, body(""))
	require.Equal(t, http.StatusOK, code, string(b))
	var resp chatResponse
	require.NoError(t, json.Unmarshal(b, &resp))
	msg := resp.Choices[0].Message
	require.NotNil(t, msg.ReasoningContent, string(b))
	assert.Regexp(t, `^[a-z]{1,3}$`, *msg.ReasoningContent)
	assert.Regexp(t, `^[a-z]{1,3}$`, *msg.Content)

	code, b = s.do(t, "POST", "/v1/chat/completions", keyA, body(`, "stream": true`))
	require.Equal(t, http.StatusOK, code, string(b))
	var reasoning, content strings.Builder
	for _, ev := range readEvents(t, bytes.TrimSuffix(b, []byte("data: [DONE]\n\n"))) {
		for _, c := range ev.data["choices"].([]any) {
			d, _ := c.(map[string]any)["delta"].(map[string]any)
			if v, ok := d["reasoning_content"].(string); ok {
				reasoning.WriteString(v)
			}
			if v, ok := d["content"].(string); ok {
				content.WriteString(v)
			}
		}
	}
	assert.Equal(t, *msg.ReasoningContent, reasoning.String())
	assert.Equal(t, *msg.Content, content.String())

	code, b = s.do(t, "POST", "/v1/chat/completions", keyA, body(`, "reasoning_format": "none"`))
	require.Equal(t, http.StatusOK, code, string(b))
	resp = chatResponse{}
	require.NoError(t, json.Unmarshal(b, &resp))
	assert.Nil(t, resp.Choices[0].Message.ReasoningContent)
	assert.Equal(t, "<think>"+*msg.ReasoningContent+"</think>"+*msg.Content, *resp.Choices[0].Message.Content)

	code, b = s.do(t, "POST", "/v1/chat/completions", keyA, body(`, "reasoning_format": "sideways"`))
	require.Equal(t, http.StatusBadRequest, code, string(b))
	assert.Equal(t, "reasoning_format", errorOf(t, b).Param)
}

// TestReasoningBlocks: the same forced block is a thinking block on
// Messages and a reasoning item on Responses, streamed (thinking_delta,
// response.reasoning_text.delta) and not, never in the answer's text.
func TestReasoningBlocks(t *testing.T) {
	r := testSandbox(t)
	s := startServerWith(t, testTenantsFile(), Config{}, withToolModel(t, readHFTemplate(t, "Qwen-Qwen3-0.6B.jinja"), r))
	g, _ := json.Marshal(thinkGrammar)
	common := `"max_tokens": 40, "seed": 4, "top_k": 40, "grammar": ` + string(g)
	msgs := `{"messages": [{"role": "user", "content": "Think, then answer."}], ` + common

	code, b := s.do(t, "POST", "/v1/chat/completions", keyA, []byte(msgs+`}`))
	require.Equal(t, http.StatusOK, code, string(b))
	var chat chatResponse
	require.NoError(t, json.Unmarshal(b, &chat))
	want, answer := *chat.Choices[0].Message.ReasoningContent, *chat.Choices[0].Message.Content

	code, b = s.do(t, "POST", "/v1/messages", keyA, []byte(msgs+`}`))
	require.Equal(t, http.StatusOK, code, string(b))
	var m anthropicMessageOut
	require.NoError(t, json.Unmarshal(b, &m))
	require.Len(t, m.Content, 2, string(b))
	assert.Equal(t, "thinking", m.Content[0].Type)
	assert.Equal(t, want, *m.Content[0].Thinking)
	assert.Equal(t, answer, *m.Content[1].Text)
	code, b = s.do(t, "POST", "/v1/messages", keyA, []byte(msgs+`, "stream": true}`))
	require.Equal(t, http.StatusOK, code, string(b))
	var thinking, text strings.Builder
	for _, ev := range readEvents(t, b) {
		if ev.name == "content_block_delta" {
			d := ev.data["delta"].(map[string]any)
			switch d["type"] {
			case "thinking_delta":
				thinking.WriteString(d["thinking"].(string))
			case "text_delta":
				text.WriteString(d["text"].(string))
			}
		}
	}
	assert.Equal(t, want, thinking.String())
	assert.Equal(t, answer, text.String())

	resp := `{"input": "Think, then answer.", "max_output_tokens": 40, "seed": 4, "top_k": 40, "grammar": ` + string(g)
	code, b = s.do(t, "POST", "/v1/responses", keyA, []byte(resp+`}`))
	require.Equal(t, http.StatusOK, code, string(b))
	var o responseObject
	require.NoError(t, json.Unmarshal(b, &o))
	require.Len(t, o.Output, 2, string(b))
	assert.Equal(t, "reasoning", o.Output[0].Type)
	assert.Equal(t, want, (*o.Output[0].Content)[0].Text)
	assert.Equal(t, answer, (*o.Output[1].Content)[0].Text)
	code, b = s.do(t, "POST", "/v1/responses", keyA, []byte(resp+`, "stream": true}`))
	require.Equal(t, http.StatusOK, code, string(b))
	thinking.Reset()
	text.Reset()
	for _, ev := range readEvents(t, b) {
		switch ev.name {
		case "response.reasoning_text.delta":
			thinking.WriteString(ev.data["delta"].(string))
		case "response.output_text.delta":
			text.WriteString(ev.data["delta"].(string))
		}
	}
	assert.Equal(t, want, thinking.String())
	assert.Equal(t, answer, text.String())
}
