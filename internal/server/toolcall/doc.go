// Package toolcall is the tool-call side of /v1/chat/completions: the
// request's tools and tool_choice (ParseTools, ParseChoice), the format a
// model writes its calls in, chosen from its chat template (Detect), the
// grammar that constrains a call's arguments to the function's JSON Schema
// (Constrain), and the parsers that turn generated text back into content
// and calls, whole (Parse) or as OpenAI streams them (Stream). The parsers
// read text; the marker texts each family needs to see (Markers) are
// often control tokens, which the server renders as text for a turn with
// tools (llama.cpp's preserved tokens).
//
// Families (Family), detected from the template text as llama.cpp's
// common/chat.cpp did before its automatic parser:
//
//	Hermes       <tool_call>{"name": ..., "arguments": {...}}</tool_call>, repeated (Qwen 2.5, Qwen3, Hermes 2 Pro, Hermes 3)
//	Llama3       {"name": ..., "parameters": {...}}, or after <|python_tag|> (Llama 3.1–3.3)
//	Mistral      [TOOL_CALLS][{"name": ..., "arguments": {...}}, ...] (Mistral Nemo)
//	MistralArgs  [TOOL_CALLS]name[ARGS]{...}, repeated (Mistral Small 3.2, Devstral, Ministral 3)
//	Generic      {"tool_calls": [{"name": ..., "arguments": {...}}, ...]} (any other template)
//
// A call's arguments are returned as the JSON text the model wrote (under
// the grammar, compact JSON valid against the schema). Text that does not
// parse as a call is content: the parsers never fail.
//
// The package imports only grammar (to check that a schema can be
// enforced); the server wires it.
package toolcall
