package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tetratelabs/wazero"

	"github.com/realizar-host/realizar-host/internal/chatsandbox"
	"github.com/realizar-host/realizar-host/internal/jinja"
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
// (exit status 3); one that only fails on the probe (a template that
// refuses a system message, say) is kept: each conversation it fails on
// is then an error naming the template line.
func openChatTemplate(ctx context.Context, path string, tok *tokenizer.Tokenizer) (*chatTemplate, error) {
	c := &chatTemplate{tok: tok}
	if tok.ChatTemplate() == "" {
		return c, nil
	}
	var err error
	if c.r, c.cache, err = newSandbox(ctx); err != nil {
		return nil, err
	}
	if _, err := c.apply(ctx, probeMessages, tokenizer.ChatOptions{AddGenerationPrompt: true}); err != nil {
		var ce *cmdError
		switch {
		case errors.As(err, &ce) && ce.code == exitBadFile:
			c.Close(ctx)
			return nil, badFile(fmt.Errorf("%s: %w", path, ce.err))
		case errors.As(err, &ce) && ce.code == exitFailure:
			return c, nil
		}
		c.Close(ctx)
		return nil, err
	}
	return c, nil
}

// newSandbox compiles the chat template sandbox into the user's cache
// folder (an in-memory cache when there is none).
func newSandbox(ctx context.Context) (*chatsandbox.Renderer, wazero.CompilationCache, error) {
	var cache wazero.CompilationCache
	if dir, err := os.UserCacheDir(); err == nil {
		cache, _ = wazero.NewCompilationCacheWithDir(filepath.Join(dir, "realizar-host", "chat-template"))
	}
	if cache == nil {
		cache = wazero.NewCompilationCache()
	}
	r, err := chatsandbox.New(ctx, chatsandbox.Config{Cache: cache})
	if err != nil {
		_ = cache.Close(ctx)
		return nil, nil, failure(err)
	}
	return r, cache, nil
}

// apply is Tokenizer.ApplyChatWith in the sandbox. A template that fails
// is an exitFailure error with the template's message and line, one past
// its limits exitBadFile, an interruption exitInterrupted.
func (c *chatTemplate) apply(ctx context.Context, msgs []tokenizer.Message, opts tokenizer.ChatOptions) (string, error) {
	render := tokenizer.RenderJinja // unused: no template
	if c.r != nil {
		render = c.r.Func(ctx)
	}
	text, _, err := c.tok.ApplyChatWith(render, msgs, opts)
	return text, templateFailure(ctx, err)
}

// templateFailure gives a rendering error its exit status: a template past
// its limits is a bad file, an interruption exitInterrupted, any other
// failure (a syntax error, raise_exception) exitFailure.
func templateFailure(ctx context.Context, err error) error {
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return &cmdError{code: exitInterrupted, err: fmt.Errorf("interrupted while rendering the chat template: %w", ctx.Err())}
	case errors.Is(err, tokenizer.ErrTemplateLimit):
		return badFile(err)
	}
	var je *jinja.Error
	if errors.As(err, &je) {
		return failure(fmt.Errorf("the chat template failed: %w", je))
	}
	return failure(err)
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
