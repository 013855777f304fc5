package toolcall

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/realizar-host/realizar-host/internal/grammar"
)

// MaxTools is the most tools a request may define.
const MaxTools = 128

// ErrRequest is a tools or tool_choice field a request cannot use; the
// *FieldError that wraps it names the field.
var ErrRequest = errors.New("toolcall: invalid request")

// ErrSchema is a tool's arguments schema that the grammar engine cannot
// enforce exactly (a *grammar.SchemaError is in the chain).
var ErrSchema = errors.New("toolcall: the tool's schema cannot be enforced")

// FieldError is a request field's problem: Param is its path as the
// request's API names it ("tools[1].function.name" on chat completions,
// "tools[1].name" on Messages).
type FieldError struct {
	Param string
	Msg   string
	Err   error // ErrRequest or ErrSchema, and the cause
}

func (e *FieldError) Error() string { return e.Param + ": " + e.Msg }
func (e *FieldError) Unwrap() error { return e.Err }

func fieldErr(param, format string, a ...any) error {
	return &FieldError{Param: param, Msg: fmt.Sprintf(format, a...), Err: ErrRequest}
}

// Tool is one function a request offers the model.
type Tool struct {
	// Name is the function's name: 1 to 64 of a-z, A-Z, 0-9, _ and -
	// (OpenAI's rule).
	Name string
	// Description is the function's description ("" when absent).
	Description string
	// Parameters is the JSON Schema of the arguments, compacted;
	// {"type":"object"} when the request gave none.
	Parameters json.RawMessage
	// Warnings name what Parameters asks and the grammar does not
	// enforce (grammar.Warning), after the schema's path
	// ("tools[0].function.parameters: format \"int32\" at #/… is not
	// enforced: …").
	Warnings []string
}

var nameRE = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// Fields are the paths, under tools[i], of a tool's name and of its
// arguments' JSON Schema in the API a request came by, which its errors
// name.
type Fields struct {
	Name, Schema string
}

// The APIs' tool fields: chat completions' function tools
// ({"type": "function", "function": {"name", "parameters"}}), Anthropic's
// Messages ({"name", "input_schema"}) and OpenAI's Responses
// ({"type": "function", "name", "parameters"}).
var (
	ChatFields      = Fields{Name: "function.name", Schema: "function.parameters"}
	MessagesFields  = Fields{Name: "name", Schema: "input_schema"}
	ResponsesFields = Fields{Name: "name", Schema: "parameters"}
)

// ParseTools reads a request's tools: an array of {"type": "function",
// "function": {"name", "description", "parameters", "strict"}}, chat's
// form, which the other APIs' tools are translated to; f names the fields
// as the request's own API does. A name outside OpenAI's rule, a name
// given twice, a schema that is not a JSON object, or one the grammar
// engine cannot enforce (ErrSchema) is a *FieldError naming the field;
// so are more than MaxTools tools. nil or JSON null is no tools.
func ParseTools(raw json.RawMessage, f Fields) ([]Tool, error) {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return nil, nil
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fieldErr("tools", "tools must be an array of tool objects")
	}
	if len(list) > MaxTools {
		return nil, fieldErr("tools", "tools holds %d tools; at most %d", len(list), MaxTools)
	}
	seen := map[string]bool{}
	tools := make([]Tool, 0, len(list))
	for i, item := range list {
		p := fmt.Sprintf("tools[%d]", i)
		var t struct {
			Type     string `json:"type"`
			Function *struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				Parameters  json.RawMessage `json:"parameters"`
			} `json:"function"`
		}
		if err := json.Unmarshal(item, &t); err != nil {
			return nil, fieldErr(p, "a tool is {\"type\": \"function\", \"function\": {...}}")
		}
		if t.Type != "function" {
			return nil, fieldErr(p+".type", "tool type %q is not supported (function only)", t.Type)
		}
		if t.Function == nil {
			return nil, fieldErr(p+".function", "a function tool needs its function object")
		}
		name, schema := p+"."+f.Name, p+"."+f.Schema
		if !nameRE.MatchString(t.Function.Name) {
			return nil, fieldErr(name, "name %q must be 1 to 64 of a-z, A-Z, 0-9, _ and -", t.Function.Name)
		}
		if seen[t.Function.Name] {
			return nil, fieldErr(name, "tool %q is defined twice", t.Function.Name)
		}
		seen[t.Function.Name] = true
		params := bytes.TrimSpace(t.Function.Parameters)
		if len(params) == 0 || string(params) == "null" {
			params = []byte(`{"type":"object"}`)
		}
		if params[0] != '{' {
			return nil, fieldErr(schema, "not a JSON Schema object")
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, params); err != nil {
			return nil, fieldErr(schema, "%v", err)
		}
		_, ws, err := grammar.FromJSONSchemaWarnings(buf.Bytes())
		if err != nil {
			return nil, &FieldError{Param: schema, Msg: "the schema cannot be enforced: " + err.Error(),
				Err: fmt.Errorf("%w: %w", ErrSchema, err)}
		}
		var warnings []string
		for _, w := range ws {
			warnings = append(warnings, schema+": "+w.String())
		}
		tools = append(tools, Tool{Name: t.Function.Name, Description: t.Function.Description, Parameters: buf.Bytes(), Warnings: warnings})
	}
	return tools, nil
}

// Mode is tool_choice's kind.
type Mode uint8

const (
	// Auto: the model may answer or call; a call is constrained from its
	// trigger on (a lazy grammar).
	Auto Mode = iota
	// None: the model answers; the template sees no tools.
	None
	// Required: the model calls one of the tools (constrained from the
	// first token).
	Required
	// Named: the model calls Choice.Name (constrained from the first token).
	Named
)

// Choice is a request's tool_choice.
type Choice struct {
	Mode Mode
	Name string // Named only
}

// ParseChoice reads tool_choice: "auto" (the default when tools are
// given; absent or null), "none", "required", or {"type": "function",
// "function": {"name": N}} with N one of tools. Anything else, or a choice
// other than none without tools, is a *FieldError.
func ParseChoice(raw json.RawMessage, tools []Tool) (Choice, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		if len(tools) == 0 {
			return Choice{Mode: None}, nil
		}
		return Choice{Mode: Auto}, nil
	}
	var c Choice
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		switch s {
		case "auto":
			c.Mode = Auto
		case "none":
			c.Mode = None
		case "required":
			c.Mode = Required
		default:
			return Choice{}, fieldErr("tool_choice", "tool_choice %q is not one of auto, none, required", s)
		}
	} else {
		var o struct {
			Type     string `json:"type"`
			Function *struct {
				Name string `json:"name"`
			} `json:"function"`
		}
		if err := json.Unmarshal(raw, &o); err != nil || o.Type != "function" || o.Function == nil {
			return Choice{}, fieldErr("tool_choice", `tool_choice is "auto", "none", "required" or {"type": "function", "function": {"name": ...}}`)
		}
		c = Choice{Mode: Named, Name: o.Function.Name}
		found := false
		for _, t := range tools {
			found = found || t.Name == c.Name
		}
		if !found && len(tools) > 0 {
			return Choice{}, fieldErr("tool_choice.function.name", "tool_choice names %q, which tools does not define", c.Name)
		}
	}
	if c.Mode != None && len(tools) == 0 {
		return Choice{}, fieldErr("tool_choice", "tool_choice %s needs tools", c.label())
	}
	return c, nil
}

func (c Choice) label() string {
	switch c.Mode {
	case Auto:
		return "auto"
	case None:
		return "none"
	case Required:
		return "required"
	}
	return "function " + c.Name
}

// GenericPrompt is the system text that tells a model whose template
// does not render tools which tools it has and how the Generic family
// calls them: the tools, one JSON object a line, and the call format.
func GenericPrompt(tools []Tool) string {
	var b strings.Builder
	b.WriteString("You can call these tools (name and JSON Schema of the arguments):\n")
	for _, t := range tools {
		name, _ := json.Marshal(t.Name)
		desc, _ := json.Marshal(t.Description)
		b.WriteString(`{"name": ` + string(name) + `, "description": ` + string(desc) + `, "parameters": ` + string(t.Parameters) + "}\n")
	}
	b.WriteString(`To call tools, answer with only a JSON object: {"tool_calls": [{"name": <tool name>, "arguments": <arguments object>}]}`)
	return b.String()
}
