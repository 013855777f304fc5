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

// argKeys are the keys a family's call object may hold its arguments
// under, the one its grammar writes first.
func (f Family) argKeys() []string {
	if f == Llama3 {
		return []string{"parameters", "arguments"}
	}
	return []string{"arguments", "parameters"}
}
