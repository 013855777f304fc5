// Package wire is the protocol between the chat-template sandbox
// (package chatsandbox) and its guest (chatsandbox/guest): the JSON request
// the guest reads from stdin, the template error it writes to stderr, and
// its exit statuses. Both sides import it, so they cannot drift apart.
package wire

import "encoding/json"

// Request is one render: the template, transformers' variables, and the
// guest's limits.
type Request struct {
	Template            string          `json:"template"`
	Messages            json.RawMessage `json:"messages"`
	Tools               json.RawMessage `json:"tools"`
	AddGenerationPrompt bool            `json:"add_generation_prompt"`
	BOS                 string          `json:"bos_token"`
	EOS                 string          `json:"eos_token"`
	Now                 string          `json:"now"` // RFC 3339, what strftime_now sees
	// Vars are further variables by name (tokenizer.ChatOptions.Vars), set
	// after the ones above.
	Vars map[string]json.RawMessage `json:"vars,omitempty"`
	// MaxStack is the goroutine stack limit in bytes (0: Go's default), so
	// that deep recursion fails as a stack overflow before the linear
	// memory cap.
	MaxStack int   `json:"max_stack"`
	MaxSteps int64 `json:"max_steps"`
	MaxBytes int   `json:"max_bytes"`
}

// Error is a jinja.Error on the wire (stderr, with ExitTemplate or
// ExitLimit).
type Error struct {
	Line   int    `json:"line"`
	Msg    string `json:"msg"`
	Syntax bool   `json:"syntax"`
	Raised bool   `json:"raised"`
}

// Exit statuses of the guest.
const (
	ExitTemplate = 1 // parse or render error: an Error as JSON on stderr
	ExitFatal    = 2 // the Go runtime's status for a fatal error (stack overflow, out of memory)
	ExitPanic    = 3 // a recovered panic: its message on stderr
	ExitBadInput = 4 // the request is not valid JSON
	ExitLimit    = 5 // max_steps or max_bytes: an Error as JSON on stderr
)
