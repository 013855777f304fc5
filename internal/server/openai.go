package server

import (
	"bytes"
	"cmp"
	"encoding/json"

	"github.com/realizar-host/realizar-host/internal/server/toolcall"
)

// samplingFields are the request fields shared by completions and chat
// (and Messages and Responses, which embed them too). The sampling
// parameters are samplingParams' fields (generated from
// plugins/sampling.Params), each read by its key (samplingFields.number,
// .has); the turn's other fields that set GenerateConfig are turnParams'
// (generated from turnfields.Fields, read by samplingFields.applyTurn).
type samplingFields struct {
	samplingParams
	turnParams
	Model               string           `json:"model"`
	MaxTokens           *int             `json:"max_tokens"`
	MaxCompletionTokens *int             `json:"max_completion_tokens"`
	Stop                stopField        `json:"stop"`
	N                   *int             `json:"n"`
	Stream              bool             `json:"stream"`
	StreamOptions       json.RawMessage  `json:"stream_options"`
	Realizar            *realizarRequest `json:"realizar"`
	// Prediction is OpenAI's Predicted Outputs: the expected answer,
	// drafted for speculative decoding (speculative.go).
	Prediction *predictionField `json:"prediction"`
	// CachePrompt is llama.cpp's cache_prompt: reuse the KV cache of the
	// previous request's longest common prefix (default true; only ever
	// the same tenant's).
	CachePrompt *bool `json:"cache_prompt"`
	// ResponseFormat is {"type": "text"} (no-op), {"type": "json_object"}
	// (JSON mode: the embedded json processor masks every token that would
	// break the JSON) or {"type": "json_schema", "json_schema": {"name",
	// "schema", "strict"}} (the embedded grammar processor; responseFormat).
	ResponseFormat json.RawMessage `json:"response_format"`
	// Grammar and JSONSchema are llama.cpp's grammar (GBNF text) and
	// json_schema (a schema) fields: the embedded grammar processor.
	Grammar    *string         `json:"grammar"`
	JSONSchema json.RawMessage `json:"json_schema"`

	// ReasoningFormat is llama-server's reasoning_format: "auto" (default:
	// split for a template that thinks), "deepseek" (always) or "none"
	// (never) — a <think>…</think> block goes to reasoning_content on
	// chat (thinking blocks on Messages, reasoning items on Responses).
	ReasoningFormat string `json:"reasoning_format"`

	// Tools and ToolChoice are chat's (tool calls; a 400 on completions).
	Tools      json.RawMessage `json:"tools"`
	ToolChoice json.RawMessage `json:"tool_choice"`
	// Refused options: present and meaningful means 400.
	Functions    json.RawMessage `json:"functions"`
	FunctionCall json.RawMessage `json:"function_call"`

	// formatParam is the name, in the API the request came by, of the
	// field ResponseFormat was translated from, which its errors and
	// warnings name: "" is chat's response_format (formatName); the
	// Responses translation sets "text.format".
	formatParam string
}

// formatName is the request's own name for its structured output field
// (ResponseFormat): "response_format", or the API's that translated it.
func (f *samplingFields) formatName() string {
	return cmp.Or(f.formatParam, "response_format")
}

// completionRequest is POST /v1/completions.
type completionRequest struct {
	samplingFields
	Prompt   promptField `json:"prompt"`
	Logprobs *int        `json:"logprobs"`
	Echo     bool        `json:"echo"`
	Suffix   *string     `json:"suffix"`
	BestOf   *int        `json:"best_of"`
}

// chatRequest is POST /v1/chat/completions.
type chatRequest struct {
	samplingFields
	Messages    []chatMessage `json:"messages"`
	Logprobs    bool          `json:"logprobs"`
	TopLogprobs *int          `json:"top_logprobs"`
	// ParallelToolCalls allows more than one call in a turn (default true).
	ParallelToolCalls *bool `json:"parallel_tool_calls"`
	// ChatTemplateKwargs is llama-server's chat_template_kwargs: an object
	// whose members the chat template sees as variables (templateKwargs).
	ChatTemplateKwargs json.RawMessage `json:"chat_template_kwargs"`
	// ReasoningEffort is OpenAI's reasoning_effort, applied to the
	// template's variables after ChatTemplateKwargs (withReasoningEffort).
	ReasoningEffort *string `json:"reasoning_effort"`
	// toolFields are the tool fields' names in the API the request came
	// by, which its errors use: Messages' and Responses' translations set
	// them; nil is chat's (toolcall.ChatFields).
	toolFields *toolcall.Fields
}

// chatMessage is one message; content is a string, an array of text
// parts, or null (an assistant message with tool_calls).
type chatMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
	Name    string          `json:"name,omitempty"`
	// ToolCalls are an assistant message's calls: [{"id", "type":
	// "function", "function": {"name", "arguments": a JSON string}}].
	ToolCalls json.RawMessage `json:"tool_calls"`
	// ToolCallID is a tool message's answer to that call.
	ToolCallID *string `json:"tool_call_id"`
}

// realizarRequest is the "realizar" extension field: the request's policies.
type realizarRequest struct {
	Processors []pluginRef `json:"processors"`
	Sampler    *pluginRef  `json:"sampler"`
	Stop       *pluginRef  `json:"stop"`
	// Speculative is the request's draft source and longest draft.
	Speculative *speculativeRequest `json:"speculative"`
	// Drafter is a drafter plugin as the request's draft source
	// (drafter.go).
	Drafter *pluginRef `json:"drafter"`
}

// pluginRef names a plugin (a built-in name or a tenant's sha256) and its config.
type pluginRef struct {
	Plugin string          `json:"plugin"`
	Config json.RawMessage `json:"config"`
}

// stopField is OpenAI's stop: null, a string, or an array of up to 4 strings.
type stopField []string

func (s *stopField) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		*s = nil
		return nil
	}
	bad := &fieldError{param: "stop", msg: "stop must be a string or an array of strings"}
	if len(b) > 0 && b[0] == '"' {
		var one string
		if err := json.Unmarshal(b, &one); err != nil {
			return bad
		}
		*s = stopField{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return bad
	}
	*s = many
	return nil
}

// promptField is a completion prompt: a string, an array of one string, or
// an array of token ids.
type promptField struct {
	text   string
	tokens []int32
	count  int // number of prompts given
	isText bool
}

func (p *promptField) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*p = promptField{text: s, count: 1, isText: true}
		return nil
	}
	var ss []string
	if err := json.Unmarshal(b, &ss); err == nil {
		*p = promptField{count: len(ss), isText: true}
		if len(ss) > 0 {
			p.text = ss[0]
		}
		return nil
	}
	var ids []int32
	if err := json.Unmarshal(b, &ids); err == nil {
		*p = promptField{tokens: ids, count: 1}
		return nil
	}
	var batches [][]int32
	if err := json.Unmarshal(b, &batches); err == nil {
		*p = promptField{count: len(batches)}
		if len(batches) > 0 {
			p.tokens = batches[0]
		}
		return nil
	}
	return &fieldError{param: "prompt", msg: "prompt must be a string, an array of strings, or an array of token ids"}
}

// usage is OpenAI's token accounting.
type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
	// CompletionTokensDetails is given with a prediction (usageOf).
	CompletionTokensDetails *completionTokensDetails `json:"completion_tokens_details,omitempty"`
}

// realizarResponse is the "realizar" extension of a response.
type realizarResponse struct {
	Seed         int64    `json:"seed"`
	StopReason   string   `json:"stop_reason"`
	Policies     []string `json:"policies"`
	QueueMs      float64  `json:"queue_ms"`
	PrefillMs    float64  `json:"prefill_ms"`
	DecodeMs     float64  `json:"decode_ms"`
	PoliciesMs   float64  `json:"policies_ms"`
	ReusedTokens int      `json:"reused_tokens"`
	// Drafts are a speculative turn's (prediction, lookup or draft model).
	Drafts *draftsResponse `json:"drafts,omitempty"`
	// Warnings name what the request asked and the server did not
	// enforce: a JSON Schema format that JSON Schema does not define
	// (accepted as an annotation), one line each, after its field.
	Warnings []string `json:"warnings,omitempty"`
}

// completionChoice is one choice of a text completion (or chunk).
type completionChoice struct {
	Index        int                 `json:"index"`
	Text         string              `json:"text"`
	Logprobs     *completionLogprobs `json:"logprobs"`
	FinishReason *string             `json:"finish_reason"`
}

// completionLogprobs is the legacy completions logprobs object.
type completionLogprobs struct {
	Tokens        []string             `json:"tokens"`
	TokenLogprobs []float32            `json:"token_logprobs"`
	TopLogprobs   []map[string]float32 `json:"top_logprobs"`
	TextOffset    []int                `json:"text_offset"`
}

// completionResponse is a text completion, or one streamed chunk of it.
type completionResponse struct {
	ID       string             `json:"id"`
	Object   string             `json:"object"`
	Created  int64              `json:"created"`
	Model    string             `json:"model"`
	Choices  []completionChoice `json:"choices"`
	Usage    *usage             `json:"usage,omitempty"`
	Realizar *realizarResponse  `json:"realizar,omitempty"`
}

// chatChoice is one choice of a chat completion.
type chatChoice struct {
	Index        int             `json:"index"`
	Message      *chatMessageOut `json:"message,omitempty"`
	Delta        *chatOut        `json:"delta,omitempty"`
	Logprobs     *chatLogprobs   `json:"logprobs"`
	FinishReason *string         `json:"finish_reason"`
}

// chatMessageOut is an assistant message: content null when it holds
// only tool calls.
type chatMessageOut struct {
	Role      string        `json:"role"`
	Content   *string       `json:"content"`
	Refusal   *string       `json:"refusal"`
	ToolCalls []toolCallOut `json:"tool_calls,omitempty"`
	// ReasoningContent is the reasoning split from the answer.
	ReasoningContent *string `json:"reasoning_content,omitempty"`
}

// toolCallOut is one call of an assistant message.
type toolCallOut struct {
	ID       string          `json:"id"`
	Type     string          `json:"type"`
	Function toolFunctionOut `json:"function"`
}

// toolFunctionOut is a call's function: arguments are a JSON text.
type toolFunctionOut struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// chatOut is a streamed delta.
type chatOut struct {
	Role             string          `json:"role,omitempty"`
	Content          *string         `json:"content,omitempty"`
	ReasoningContent *string         `json:"reasoning_content,omitempty"`
	Refusal          *string         `json:"refusal"`
	ToolCalls        []toolCallDelta `json:"tool_calls,omitempty"`
}

// toolCallDelta is a part of a streamed call, as OpenAI streams it: the
// first part has the id, type and name and the arguments so far, the
// later ones the index and argument text to append.
type toolCallDelta struct {
	Index    int               `json:"index"`
	ID       string            `json:"id,omitempty"`
	Type     string            `json:"type,omitempty"`
	Function toolFunctionDelta `json:"function"`
}

type toolFunctionDelta struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

// chatLogprobs is the chat logprobs object.
type chatLogprobs struct {
	Content []chatTokenLogprob `json:"content"`
	Refusal []chatTokenLogprob `json:"refusal"`
}

// chatTokenLogprob is one token's logprob with its alternatives.
type chatTokenLogprob struct {
	Token       string             `json:"token"`
	Logprob     float32            `json:"logprob"`
	Bytes       []int              `json:"bytes"`
	TopLogprobs []chatTokenLogprob `json:"top_logprobs,omitempty"`
}

// chatResponse is a chat completion or one chunk of it.
type chatResponse struct {
	ID       string            `json:"id"`
	Object   string            `json:"object"`
	Created  int64             `json:"created"`
	Model    string            `json:"model"`
	Choices  []chatChoice      `json:"choices"`
	Usage    *usage            `json:"usage,omitempty"`
	Realizar *realizarResponse `json:"realizar,omitempty"`
}

// modelList is GET /v1/models.
type modelList struct {
	Object string        `json:"object"`
	Data   []modelObject `json:"data"`
}

type modelObject struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}
