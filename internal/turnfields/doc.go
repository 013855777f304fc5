// Package turnfields declares once the request fields of a turn that are
// not sampling parameters and set a field of engine.GenerateConfig: the
// table Fields gives each one's request field (the same key on every
// endpoint: completions, chat, Anthropic's Messages and OpenAI's
// Responses), whether OpenAI's and Anthropic's APIs have it, llama.cpp's
// flag, its type and default, the CLI flag of run and chat, its help, and
// the GenerateConfig field it sets with the function that sets it. The
// server's request fields (internal/server/turn_fields.go, generated),
// its reading of them, the CLI's flags and the README's table come from
// it; tests drive every row through the server and the CLI and fail when
// one has no effect.
//
// The sampling parameters have their own table
// (internal/plugins/sampling.Params): they reach the plugins' configs,
// not GenerateConfig. A field whose name or meaning differs between the
// endpoints (max_tokens, Responses' max_output_tokens; completions'
// integer logprobs, chat's boolean one) is read by each endpoint's own
// code, not declared here: a row is one key that means one thing
// everywhere.
package turnfields
