package toolcall

import "strings"

// Family is the format a model writes its tool calls in.
type Family uint8

// The families; see the package doc for each one's format.
const (
	Generic Family = iota
	Hermes
	Llama3
	Mistral
	MistralArgs
)

var familyNames = [...]string{Generic: "generic", Hermes: "hermes", Llama3: "llama3", Mistral: "mistral", MistralArgs: "mistral-args"}

// String is the family's name: "generic", "hermes", "llama3", "mistral"
// or "mistral-args".
func (f Family) String() string {
	if int(f) < len(familyNames) {
		return familyNames[f]
	}
	return "invalid"
}

// Detect chooses the family from a chat template's text, by the markers
// its tool-call rendering writes (the rules of llama.cpp's common/chat.cpp
// before its automatic parser): "<tool_call>" is Hermes; "[TOOL_CALLS]" is
// Mistral, or MistralArgs when the template also writes "[ARGS]"; Llama 3's
// "<|start_header_id|>ipython<|end_header_id|>" header, or its
// "<|python_tag|>" beside "<|start_header_id|>", is Llama3; anything else
// (an empty template too) is Generic.
//
// # Notes
//
// Templates whose calls are XML inside <tool_call> (Qwen3-Coder's
// <function=...><parameter=...>) are Hermes here: their calls are
// constrained to and parsed as Hermes JSON.
func Detect(template string) Family {
	has := func(s string) bool { return strings.Contains(template, s) }
	switch {
	case has("<tool_call>"):
		return Hermes
	case has("[TOOL_CALLS]") && has("[ARGS]"):
		return MistralArgs
	case has("[TOOL_CALLS]"):
		return Mistral
	case has("<|start_header_id|>ipython<|end_header_id|>"),
		has("<|start_header_id|>") && has("<|python_tag|>"):
		return Llama3
	}
	return Generic
}

// The marker texts the families write their calls with. In a model's
// vocabulary each is usually one token, often a control token.
const (
	hermesOpen  = "<tool_call>"
	hermesClose = "</tool_call>"
	pythonTag   = "<|python_tag|>"
	toolCalls   = "[TOOL_CALLS]"
	argsTag     = "[ARGS]"
	callIDTag   = "[CALL_ID]"
)

// Markers are the texts family f's parser looks for (Parse, Stream):
// "<tool_call>" and "</tool_call>" for Hermes, "<|python_tag|>" for
// Llama3, "[TOOL_CALLS]" for Mistral, "[TOOL_CALLS]", "[ARGS]" and
// "[CALL_ID]" for MistralArgs, none for Generic. A fresh slice.
//
// # Notes
//
// Where a marker is a control token of the model's vocabulary (Llama
// 3.1's <|python_tag|>, Mistral's [TOOL_CALLS]), the text a user reads
// hides it, as llama.cpp does; a turn whose calls are parsed must render
// it as text (llama.cpp's preserved tokens, tokenizer.RenderOptions.Preserve)
// or the parser never sees the call begin.
func (f Family) Markers() []string {
	switch f {
	case Hermes:
		return []string{hermesOpen, hermesClose}
	case Llama3:
		return []string{pythonTag}
	case Mistral:
		return []string{toolCalls}
	case MistralArgs:
		return []string{toolCalls, argsTag, callIDTag}
	}
	return nil
}

// argKeys are the keys a family's call object may hold its arguments
// under, the one its grammar writes first.
func (f Family) argKeys() []string {
	if f == Llama3 {
		return []string{"parameters", "arguments"}
	}
	return []string{"arguments", "parameters"}
}
