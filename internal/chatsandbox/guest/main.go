//go:build wasip1

// Command guest renders one Hugging Face chat template with package jinja
// (Jinja2 as transformers' apply_chat_template runs it), inside the
// WebAssembly sandbox of package chatsandbox. It is a WASI command: it
// reads one JSON request from stdin,
//
//	{"template": "...", "messages": [{"role": "...", ...}], "tools": null,
//	 "add_generation_prompt": true, "bos_token": "...", "eos_token": "...",
//	 "now": "2025-07-04T09:05:03Z", "vars": {"enable_thinking": false}, "max_stack": 8388608,
//	 "max_steps": 1000000, "max_bytes": 1048576}
//
// writes the rendered text to stdout and exits 0. A template that does not
// parse or render writes its jinja.Error as JSON ({"line": 3, "msg": ...,
// "syntax": false, "raised": false}) to stderr and exits 1; one stopped by
// max_steps or max_bytes does the same and exits 5. A panic in the engine
// writes "panic: ..." and exits 3. Go's fatal errors (out of memory, stack
// overflow) exit 2 as the Go runtime does.
//
// The variables are tokenizer.ChatVars', so that the sandboxed rendering
// is tokenizer.RenderJinja's.
//
// Built by chatsandbox/build.sh (GOOS=wasip1, -trimpath, no build id).
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"time"

	"github.com/realizar-host/realizar-host/internal/chatsandbox/wire"
	"github.com/realizar-host/realizar-host/internal/jinja"
)

func main() {
	in, err := io.ReadAll(os.Stdin)
	if err != nil {
		fail(wire.ExitBadInput, "read request: %v", err)
	}
	var req wire.Request
	if err := json.Unmarshal(in, &req); err != nil {
		fail(wire.ExitBadInput, "decode request: %v", err)
	}
	if req.MaxStack > 0 {
		debug.SetMaxStack(req.MaxStack)
	}
	out, code, msg := render(req)
	if code != 0 {
		fail(code, "%s", msg)
	}
	if _, err := os.Stdout.WriteString(out); err != nil {
		fail(wire.ExitTemplate, "write: %v", err)
	}
}

func render(req wire.Request) (out string, code int, msg string) {
	defer func() {
		if r := recover(); r != nil {
			out, code, msg = "", wire.ExitPanic, fmt.Sprintf("panic: %v", r)
		}
	}()
	now, err := time.Parse(time.RFC3339Nano, req.Now)
	if err != nil {
		return "", wire.ExitBadInput, fmt.Sprintf("now: %v", err)
	}
	var tools any
	if len(req.Tools) > 0 && string(req.Tools) != "null" {
		tools = req.Tools
	}
	vars := map[string]any{
		"messages":              req.Messages,
		"tools":                 tools,
		"add_generation_prompt": req.AddGenerationPrompt,
		"bos_token":             req.BOS,
		"eos_token":             req.EOS,
	}
	for k, v := range req.Vars {
		vars[k] = v
	}
	tpl, err := jinja.Parse(req.Template)
	if err == nil {
		out, err = tpl.Render(vars, jinja.Options{Now: now, Limits: jinja.Limits{Steps: req.MaxSteps, Bytes: req.MaxBytes}})
	}
	if err == nil {
		return out, 0, ""
	}
	var je *jinja.Error
	if !errors.As(err, &je) {
		return "", wire.ExitBadInput, err.Error()
	}
	b, _ := json.Marshal(wire.Error{Line: je.Line, Msg: je.Msg, Syntax: je.Syntax, Raised: je.Raised})
	if je.Limit {
		return "", wire.ExitLimit, string(b)
	}
	return "", wire.ExitTemplate, string(b)
}

func fail(code int, format string, args ...any) {
	fmt.Fprintf(os.Stderr, format, args...)
	os.Exit(code)
}
