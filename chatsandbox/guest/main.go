//go:build wasip1

// Command guest renders one Hugging Face chat template (Jinja2) with gonja,
// inside the WebAssembly sandbox of package chatsandbox. It is a WASI
// command: it reads one JSON request from stdin,
//
//	{"template": "...", "messages": [{"role": "...", "content": "..."}],
//	 "add_generation_prompt": true, "bos_token": "...", "eos_token": "..."}
//
// writes the rendered text to stdout and exits 0. A template that does not
// parse or render writes "parse: ..." or "render: ..." to stderr and exits
// 1; a panic in the engine writes "panic: ..." and exits 3. Go's fatal
// errors (out of memory, stack overflow) exit 2 as the Go runtime does.
//
// The variables and the raise_exception function are exactly those of
// tokenizer.RenderJinja, with the same gonja version (go.mod), so that the
// sandboxed rendering is the in-process one.
//
// Built by chatsandbox/build.sh (GOOS=wasip1, -trimpath, no build id).
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"github.com/nikolalohinski/gonja/v2"
	"github.com/nikolalohinski/gonja/v2/exec"
)

// Exit statuses (chatsandbox reads them).
const (
	exitTemplate = 1 // parse or render error, message on stderr
	exitBadInput = 4 // the request is not valid JSON
	exitPanic    = 3 // a recovered panic, message on stderr
)

type request struct {
	Template string `json:"template"`
	Messages []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"messages"`
	AddGenerationPrompt bool   `json:"add_generation_prompt"`
	BOS                 string `json:"bos_token"`
	EOS                 string `json:"eos_token"`
	// MaxStack is the goroutine stack limit in bytes (0: Go's default), so
	// that a recursive macro fails as a stack overflow before the linear
	// memory cap.
	MaxStack int `json:"max_stack"`
}

func main() {
	in, err := io.ReadAll(os.Stdin)
	if err != nil {
		fail(exitBadInput, "read request: %v", err)
	}
	var req request
	if err := json.Unmarshal(in, &req); err != nil {
		fail(exitBadInput, "decode request: %v", err)
	}
	if req.MaxStack > 0 {
		debug.SetMaxStack(req.MaxStack)
	}
	out, code, msg := render(req)
	if code != 0 {
		fail(code, "%s", msg)
	}
	if _, err := os.Stdout.WriteString(out); err != nil {
		fail(exitTemplate, "write: %v", err)
	}
}

// render is tokenizer.RenderJinja without the error wrapping.
func render(req request) (out string, code int, msg string) {
	defer func() {
		if r := recover(); r != nil {
			out, code, msg = "", exitPanic, fmt.Sprintf("panic: %v", r)
		}
	}()
	tpl, err := gonja.FromString(req.Template)
	if err != nil {
		return "", exitTemplate, fmt.Sprintf("parse: %v", err)
	}
	list := make([]map[string]any, len(req.Messages))
	for i, m := range req.Messages {
		list[i] = map[string]any{"role": m.Role, "content": m.Content}
	}
	ctx := exec.NewContext(map[string]any{
		"messages":              list,
		"add_generation_prompt": req.AddGenerationPrompt,
		"bos_token":             req.BOS,
		"eos_token":             req.EOS,
		"raise_exception": func(msg string) (string, error) {
			return "", fmt.Errorf("raise_exception: %s", msg)
		},
	})
	s, err := tpl.ExecuteToString(ctx)
	if err != nil {
		return "", exitTemplate, fmt.Sprintf("render: %v", err)
	}
	return s, 0, ""
}

func fail(code int, format string, args ...any) {
	fmt.Fprintf(os.Stderr, format, args...)
	os.Exit(code)
}
