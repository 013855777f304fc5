package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tetratelabs/wazero"

	"github.com/realizar-host/realizar-host/chatsandbox"
	"github.com/realizar-host/realizar-host/tokenizer"
)

// chatTemplate renders a model's chat template (tokenizer.chat_template,
// untrusted: it comes with a downloaded file) in the WebAssembly sandbox,
// under its deadline and memory cap.
type chatTemplate struct {
	tok   *tokenizer.Tokenizer
	r     *chatsandbox.Renderer // nil when the file has no template
	cache wazero.CompilationCache
}

// probeMessages is the conversation rendered at load, so that a template
// that crashes or runs past its budget on any conversation is refused
// before the first request.
var probeMessages = []tokenizer.Message{
	{Role: "system", Content: "You are a helpful assistant."},
	{Role: "user", Content: "Hello."},
	{Role: "assistant", Content: "Hello! How can I help?"},
	{Role: "user", Content: "Say hi."},
}

// openChatTemplate compiles the sandbox (into the user's cache folder, so
// that later runs skip the compilation) and renders probeMessages with the
// template of the file at path. A template past its limits is a bad file
// (exit status 3); one that only fails to render is used as ApplyChat
// uses it (a built-in format with a note).
func openChatTemplate(ctx context.Context, path string, tok *tokenizer.Tokenizer) (*chatTemplate, error) {
	c := &chatTemplate{tok: tok}
	if tok.ChatTemplate() == "" {
		return c, nil
	}
	if dir, err := os.UserCacheDir(); err == nil {
		c.cache, _ = wazero.NewCompilationCacheWithDir(filepath.Join(dir, "realizar-host", "chat-template"))
	}
	if c.cache == nil {
		c.cache = wazero.NewCompilationCache()
	}
	var err error
	if c.r, err = chatsandbox.New(ctx, chatsandbox.Config{Cache: c.cache}); err != nil {
		c.Close(ctx)
		return nil, failure(err)
	}
	if _, _, _, err := c.apply(ctx, probeMessages, true); err != nil {
		c.Close(ctx)
		var ce *cmdError
		if errors.As(err, &ce) && ce.code == exitBadFile {
			return nil, badFile(fmt.Errorf("%s: %w", path, ce.err))
		}
		return nil, err
	}
	return c, nil
}

// apply is Tokenizer.ApplyChatWith in the sandbox. A template past its
// limits is an exitBadFile error, an interruption exitInterrupted.
func (c *chatTemplate) apply(ctx context.Context, msgs []tokenizer.Message, addGenerationPrompt bool) (string, tokenizer.ChatFormat, error, error) {
	render := tokenizer.RenderJinja // unused: no template
	if c.r != nil {
		render = c.r.Func(ctx)
	}
	text, used, cause, err := c.tok.ApplyChatWith(render, msgs, addGenerationPrompt)
	switch {
	case err == nil:
		return text, used, cause, nil
	case ctx.Err() != nil:
		return "", used, nil, &cmdError{code: exitInterrupted, err: fmt.Errorf("interrupted while rendering the chat template: %w", ctx.Err())}
	}
	return "", used, nil, badFile(err)
}

// Close frees the sandbox.
func (c *chatTemplate) Close(ctx context.Context) {
	if c.r != nil {
		_ = c.r.Close(ctx)
	}
	if c.cache != nil {
		_ = c.cache.Close(ctx)
	}
}
