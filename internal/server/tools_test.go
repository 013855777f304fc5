package server

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/forward"
	"github.com/realizar-host/realizar-host/gguf"
	"github.com/realizar-host/realizar-host/host"
	"github.com/realizar-host/realizar-host/internal/chatsandbox"
	"github.com/realizar-host/realizar-host/internal/fixture"
	"github.com/realizar-host/realizar-host/internal/server/toolcall"
	"github.com/realizar-host/realizar-host/internal/testenv"
	"github.com/realizar-host/realizar-host/model"
	"github.com/realizar-host/realizar-host/tokenizer"
)

// toolSchema is the test tool's parameters: short bounded values, so a
// random-weight model's constrained call ends within the budget.
const toolSchema = `{"type":"object","properties":{"city":{"type":"string","maxLength":6},` +
	`"unit":{"enum":["c","f"]},"days":{"type":"integer","minimum":1,"maximum":7}},"required":["city","unit"],"additionalProperties":false}`

// toolFamilies are a template of llama.cpp's test set per family.
var toolFamilies = []struct {
	family   toolcall.Family
	template string
}{
	{toolcall.Hermes, "Qwen-Qwen2.5-7B-Instruct.jinja"},
	{toolcall.Llama3, "meta-llama-Llama-3.1-8B-Instruct.jinja"},
	{toolcall.Mistral, "mistralai-Mistral-Nemo-Instruct-2407.jinja"},
	{toolcall.MistralArgs, "Mistral-Small-3.2-24B-Instruct-2506.jinja"},
	{toolcall.Generic, "microsoft-Phi-3.5-mini-instruct.jinja"},
}

func readHFTemplate(t testing.TB, name string) string {
	b, err := os.ReadFile(filepath.Join("..", "jinja", "testdata", "hf", "templates", name))
	require.NoError(t, err)
	return string(b)
}

// The tool tests' model: the server fixture's shape with a 2,048-position
// context (templates that render tools make prompts of several hundred
// tokens) over stories260K's 512-token vocabulary, so that the grammar
// processor prepares its vocabulary in milliseconds, not the seconds
// 32,000 tokens take inside the sandbox.
var (
	toolFixtureOnce sync.Once
	toolFixturePath string
	toolFixtureErr  error
)

func toolFixture(t testing.TB) string {
	stories := testenv.Stories()
	toolFixtureOnce.Do(func() {
		toolFixturePath = filepath.Join(filepath.Dir(fixturePath), "tool-fixture.gguf")
		c := fixtureConfig()
		c.Name, c.Context = "tool-fixture", 2048
		vocab, err := gguf.Open(stories)
		if err == nil {
			err = fixture.GenerateFile(toolFixturePath, c, vocab)
			_ = vocab.Close()
		}
		toolFixtureErr = err
	})
	require.NoError(t, toolFixtureErr)
	return toolFixturePath
}

// withToolModel serves the tool fixture with template, rendered in r.
func withToolModel(t *testing.T, template string, r *chatsandbox.Renderer) func(*Model, *model.Model) {
	return withToolFile(t, toolFixture(t), template, r)
}

// withToolFile is withToolModel over the model file at path.
func withToolFile(t *testing.T, path, template string, r *chatsandbox.Renderer) func(*Model, *model.Model) {
	return func(m *Model, _ *model.Model) {
		f, err := gguf.Open(path)
		require.NoError(t, err)
		spec, err := tokenizer.SpecFromGGUF(f)
		require.NoError(t, err)
		spec.ChatTemplate = template
		tok, err := tokenizer.New(spec)
		require.NoError(t, err)
		mdl, err := model.Load(f, model.Options{Threads: 1})
		require.NoError(t, err)
		t.Cleanup(func() { _ = mdl.Close(); _ = f.Close() })
		newForward := func() (forward.ArchForward, error) {
			return forward.NewSequenceForward(mdl.NewSequence(), forward.Options{Arch: mdl.Config().Arch, ModelContext: mdl.Config().ContextLength})
		}
		fwd, err := newForward()
		require.NoError(t, err)
		m.Forward, m.NewForward, m.Tokenizer, m.KVBytesPerPosition, m.RenderChat = fwd, newForward, tok, mdl.KVBytesPerPosition(), r.Render
	}
}

func toolParams(t *testing.T, choice openai.ChatCompletionToolChoiceOptionUnionParam, seed int64) openai.ChatCompletionNewParams {
	var schema map[string]any
	require.NoError(t, json.Unmarshal([]byte(toolSchema), &schema))
	return openai.ChatCompletionNewParams{Model: "serve-fixture",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("What is the weather in Paris?")},
		Tools: []openai.ChatCompletionToolUnionParam{
			openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{Name: "get_weather",
				Description: openai.String("The weather in a city"), Parameters: schema}),
			openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{Name: "get_time",
				Parameters: openai.FunctionParameters{"type": "object", "properties": map[string]any{}, "additionalProperties": false}}),
		},
		ToolChoice: choice, ParallelToolCalls: openai.Bool(false), MaxTokens: openai.Int(160), Seed: openai.Int(seed)}
}

// checkCalls asserts calls are one valid call of a test tool: get_weather
// with arguments valid against toolSchema, or get_time with {}.
func checkCalls(t *testing.T, v *jsonschema.Schema, calls []openai.ChatCompletionMessageToolCallUnion) {
	require.Len(t, calls, 1)
	c := calls[0]
	assert.Equal(t, "function", c.Type)
	assert.NotEmpty(t, c.ID)
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(c.Function.Arguments))
	require.NoError(t, err, c.Function.Arguments)
	switch c.Function.Name {
	case "get_weather":
		assert.NoError(t, v.Validate(inst), c.Function.Arguments)
	case "get_time":
		assert.Equal(t, map[string]any{}, inst)
	default:
		t.Errorf("call of %q", c.Function.Name)
	}
}

// TestE2EToolCalls: for each family's template, with the official client,
// tool_choice required and a named function always give one call whose
// arguments validate against the schema, with finish_reason tool_calls,
// streamed (ChatCompletionAccumulator) and not; the call fed back with
// a tool result renders with the family's template; tool_choice auto
// answers 200 (a random model writes text, returned as content).
func TestE2EToolCalls(t *testing.T) {
	var doc any
	require.NoError(t, json.Unmarshal([]byte(toolSchema), &doc))
	jc := jsonschema.NewCompiler()
	require.NoError(t, jc.AddResource("s.json", doc))
	v, err := jc.Compile("s.json")
	require.NoError(t, err)
	r := testSandbox(t)
	ctx := context.Background()
	h, err := host.New(ctx, testHostConfig(t)) // one host: the grammar processor compiles once
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.Close(ctx) })
	required := openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("required")}
	named := openai.ToolChoiceOptionFunctionToolChoice(openai.ChatCompletionNamedToolChoiceFunctionParam{Name: "get_weather"})
	families, seeds := toolFamilies, int64(2)
	if raceSlowdown > 1 {
		// The race pass (several times slower) runs one family, one seed:
		// the tool path's own code is not concurrent.
		families, seeds = families[:1], 1
	}
	for _, fam := range families {
		t.Run(fam.family.String(), func(t *testing.T) {
			template := readHFTemplate(t, fam.template)
			require.Equal(t, fam.family, toolcall.Detect(template))
			s := startServerWith(t, testTenantsFile(), Config{Host: h}, withToolModel(t, template, r))
			c := client(s, keyA)
			for seed := int64(1); seed <= seeds; seed++ {
				p := toolParams(t, required, seed)
				if seed == 2 {
					p.ToolChoice = named
				}
				resp, err := c.Chat.Completions.New(ctx, p, topK)
				require.NoError(t, err)
				require.Len(t, resp.Choices, 1)
				msg := resp.Choices[0].Message
				assert.Equal(t, "tool_calls", resp.Choices[0].FinishReason, "%+v", msg)
				checkCalls(t, v, msg.ToolCalls)
				if seed == 2 {
					assert.Equal(t, "get_weather", msg.ToolCalls[0].Function.Name)
				}

				stream := c.Chat.Completions.NewStreaming(ctx, p, topK)
				acc := openai.ChatCompletionAccumulator{}
				for stream.Next() {
					require.True(t, acc.AddChunk(stream.Current()))
				}
				require.NoError(t, stream.Err())
				require.Len(t, acc.Choices, 1)
				assert.Equal(t, "tool_calls", acc.Choices[0].FinishReason)
				checkCalls(t, v, acc.Choices[0].Message.ToolCalls)
				// The same seed: the same call, but for its id.
				got := acc.Choices[0].Message.ToolCalls[0].Function
				assert.Equal(t, msg.ToolCalls[0].Function.Name, got.Name)
				assert.Equal(t, msg.ToolCalls[0].Function.Arguments, got.Arguments)
				assert.Equal(t, msg.Content, acc.Choices[0].Message.Content)

				if seed == 1 {
					next := p
					next.Messages = append(append([]openai.ChatCompletionMessageParamUnion{}, p.Messages...), msg.ToParam(),
						openai.ToolMessage(`{"temperature": 21}`, msg.ToolCalls[0].ID))
					next.ToolChoice = openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("auto")}
					next.MaxTokens = openai.Int(8)
					back, err := c.Chat.Completions.New(ctx, next, topK)
					require.NoError(t, err, "the call fed back")
					assert.Greater(t, back.Usage.PromptTokens, resp.Usage.PromptTokens)
					assert.NotEqual(t, "", back.Choices[0].FinishReason)
				}
			}
			// auto: a random model writes text, returned as content (a
			// call, were it to write one, would be constrained and valid).
			p := toolParams(t, openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("auto")}, 3)
			p.MaxTokens = openai.Int(24)
			resp, err := c.Chat.Completions.New(ctx, p, topK)
			require.NoError(t, err)
			if calls := resp.Choices[0].Message.ToolCalls; len(calls) > 0 {
				checkCalls(t, v, calls)
			} else {
				assert.NotEmpty(t, resp.Choices[0].Message.Content)
			}
			stream := c.Chat.Completions.NewStreaming(ctx, p, topK)
			acc := openai.ChatCompletionAccumulator{}
			for stream.Next() {
				require.True(t, acc.AddChunk(stream.Current()))
			}
			require.NoError(t, stream.Err())
			assert.Equal(t, resp.Choices[0].Message.Content, acc.Choices[0].Message.Content)
			assert.Equal(t, resp.Choices[0].FinishReason, acc.Choices[0].FinishReason)
		})
	}
}

// TestToolRequests: the request errors name their field, completions
// refuse tools (pointing at chat completions), a tool message must answer
// an earlier call, and tool_choice none answers with text.
func TestToolRequests(t *testing.T) {
	s := startServer(t, testTenantsFile(), 64)
	tools := `[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}]`
	user := `"messages":[{"role":"user","content":"hi"}]`
	for _, tc := range []struct{ name, path, body, param, code string }{
		{"completions", "/v1/completions", `{"prompt":"x","tools":` + tools + `}`, "tools", "unsupported_parameter"},
		{"legacy functions", "/v1/chat/completions", `{` + user + `,"functions":[{"name":"f"}]}`, "functions", "unsupported_parameter"},
		{"bad name", "/v1/chat/completions", `{` + user + `,"tools":[{"type":"function","function":{"name":"a b"}}]}`, "tools[0].function.name", ""},
		{"unenforceable schema", "/v1/chat/completions", `{` + user + `,"tools":[{"type":"function","function":{"name":"f","parameters":{"not":{}}}}]}`,
			"tools[0].function.parameters", "unsupported_schema"},
		{"choice without tools", "/v1/chat/completions", `{` + user + `,"tool_choice":"required"}`, "tool_choice", ""},
		{"unknown named function", "/v1/chat/completions", `{` + user + `,"tools":` + tools + `,"tool_choice":{"type":"function","function":{"name":"g"}}}`,
			"tool_choice.function.name", ""},
		{"tools and a schema", "/v1/chat/completions", `{` + user + `,"tools":` + tools + `,"response_format":{"type":"json_object"}}`, "tools", ""},
		{"tool message without id", "/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"},{"role":"tool","content":"1"}]}`,
			"messages[1].tool_call_id", ""},
		{"tool message answering no call", "/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":null,` +
			`"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c2","content":"1"}]}`,
			"messages[2].tool_call_id", ""},
		{"tool message before any call", "/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"},{"role":"tool","tool_call_id":"c1","content":"1"}]}`,
			"messages[1].tool_call_id", ""},
		{"arguments not JSON", "/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":null,` +
			`"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{oops"}}]}]}`, "messages[1].tool_calls[0].function.arguments", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := s.do(t, "POST", tc.path, keyA, []byte(tc.body))
			require.Equal(t, http.StatusBadRequest, code, string(body))
			e := errorOf(t, body)
			assert.Equal(t, tc.param, e.Param, e.Message)
			if tc.code != "" {
				assert.Equal(t, tc.code, e.Code)
			}
			if tc.path == "/v1/completions" {
				assert.Contains(t, e.Message, "supported on /v1/chat/completions only")
			}
		})
	}
	t.Run("none answers with text", func(t *testing.T) {
		code, body := s.do(t, "POST", "/v1/chat/completions", keyA, []byte(`{`+user+`,"tools":`+tools+`,"tool_choice":"none","max_tokens":4}`))
		require.Equal(t, http.StatusOK, code, string(body))
		var r chatResponse
		require.NoError(t, json.Unmarshal(body, &r))
		assert.Empty(t, r.Choices[0].Message.ToolCalls)
		assert.Equal(t, "length", *r.Choices[0].FinishReason)
	})
}

// TestToolFieldNames: a bad tool's error names its fields as the
// client's API does — chat completions' tools[i].function.name and
// .parameters, Messages' tools[i].name and .input_schema, Responses'
// tools[i].name and .parameters — and no other API's words.
func TestToolFieldNames(t *testing.T) {
	s := startServer(t, testTenantsFile(), 0)
	user := `"messages":[{"role":"user","content":"hi"}]`
	for _, api := range []struct {
		path, name, schema string
		body               func(tools string) string
		others             []string // words of the other APIs' fields
	}{
		{"/v1/chat/completions", "function.name", "function.parameters", func(tools string) string {
			return `{` + user + `,"tools":` + strings.NewReplacer("NAME", `"function":{"name"`, "SCHEMA", `"parameters"`, "END", `}`).Replace(tools) + `}`
		}, []string{"input_schema"}},
		{"/v1/messages", "name", "input_schema", func(tools string) string {
			return `{"max_tokens":4,` + user + `,"tools":` + strings.NewReplacer(`"type":"function",`, "", "NAME", `"name"`, "SCHEMA", `"input_schema"`, "END", ``).Replace(tools) + `}`
		}, []string{"function", "parameters"}},
		{"/v1/responses", "name", "parameters", func(tools string) string {
			return `{"input":"hi","tools":` + strings.NewReplacer("NAME", `"name"`, "SCHEMA", `"parameters"`, "END", ``).Replace(tools) + `}`
		}, []string{"function.", "input_schema"}},
	} {
		for _, tc := range []struct{ name, tools, field, msg string }{
			{"bad name", `[{"type":"function",NAME:"a b"END}]`, "tools[0].NAME", `name "a b" must be 1 to 64`},
			{"defined twice", `[{"type":"function",NAME:"f"END},{"type":"function",NAME:"f"END}]`, "tools[1].NAME", `tool "f" is defined twice`},
			{"schema not an object", `[{"type":"function",NAME:"f",SCHEMA:[1]END}]`, "tools[0].SCHEMA", "not a JSON Schema object"},
			{"schema not enforceable", `[{"type":"function",NAME:"f",SCHEMA:{"type":"array","uniqueItems":true}END}]`, "tools[0].SCHEMA", "the schema cannot be enforced"},
		} {
			t.Run(api.path+" "+tc.name, func(t *testing.T) {
				field := strings.NewReplacer("NAME", api.name, "SCHEMA", api.schema).Replace(tc.field)
				body := api.body(tc.tools)
				var code int
				var msg string
				if api.path == "/v1/messages" {
					var raw []byte
					code, raw, _ = s.anthropicDo(t, api.path, keyA, body)
					var e anthropicError
					require.NoError(t, json.Unmarshal(raw, &e), string(raw))
					msg = e.Error.Message
				} else {
					var raw []byte
					code, raw = s.do(t, "POST", api.path, keyA, []byte(body))
					e := errorOf(t, raw)
					assert.Equal(t, field, e.Param, e.Message)
					msg = e.Message
				}
				require.Equal(t, http.StatusBadRequest, code, body)
				assert.True(t, strings.HasPrefix(msg, field+": "), "%q names %s first", msg, field)
				assert.Contains(t, msg, tc.msg)
				for _, w := range api.others {
					assert.NotContains(t, msg, w, "another API's field")
				}
			})
		}
	}
}

// TestToolHistoryRenders: a conversation in OpenAI's wire format (calls
// with arguments as JSON strings, tool results with their ids), converted
// as the server converts it, renders with each family's templates exactly
// as Jinja2 renders transformers' form of it (server/testdata/tools:
// render.py wrote expected.json with python3-jinja2), errors included.
func TestToolHistoryRenders(t *testing.T) {
	var conv struct {
		Tools json.RawMessage `json:"tools"`
		Cases []struct {
			Name     string        `json:"name"`
			Messages []chatMessage `json:"messages"`
		} `json:"cases"`
	}
	b, err := os.ReadFile(filepath.Join("testdata", "tools", "conversations.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &conv))
	var expected map[string]map[string]struct {
		Text  *string `json:"text"`
		Error string  `json:"error"`
	}
	b, err = os.ReadFile(filepath.Join("testdata", "tools", "expected.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &expected))
	require.NotEmpty(t, expected)
	var tools bytes.Buffer
	require.NoError(t, json.Compact(&tools, conv.Tools))
	for name, cases := range expected {
		template := readHFTemplate(t, name)
		assert.NotEqual(t, toolcall.Generic, toolcall.Detect(template), name)
		for _, c := range conv.Cases {
			want, ok := cases[c.Name]
			require.True(t, ok, "%s: %s", name, c.Name)
			msgs, err := chatMessages(c.Messages, polyfills(template), func(int) error { return nil })
			require.NoError(t, err)
			got, err := tokenizer.RenderJinja(template, msgs, tokenizer.ChatOptions{AddGenerationPrompt: true, BOS: "<s>", EOS: "</s>", Tools: tools.Bytes(),
				Now: time.Date(2025, 7, 4, 9, 5, 3, 0, time.UTC)})
			if want.Text == nil {
				require.Error(t, err, "%s: %s: Jinja2 says %s", name, c.Name, want.Error)
				continue
			}
			require.NoError(t, err, "%s: %s", name, c.Name)
			assert.Equal(t, *want.Text, got, "%s: %s", name, c.Name)
		}
	}
}
