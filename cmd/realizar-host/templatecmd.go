package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/realizar-host/realizar-host/tokenizer"
)

func newTemplateCmd() *cobra.Command {
	return groupCmd("template", "Work with chat templates", newTemplateRenderCmd())
}

// templateRenderOptions are template render's flags.
type templateRenderOptions struct {
	model, template string
	bos, eos        string
	messages, tools string
	noGenPrompt     bool
	now             string
}

func newTemplateRenderCmd() *cobra.Command {
	var o templateRenderOptions
	cmd := &cobra.Command{
		Use:   "render (--model M.gguf | --template FILE --bos S --eos S) --messages JSON|@FILE [--tools JSON|@FILE] [--no-generation-prompt] [--now TIME]",
		Short: "Print a conversation rendered with a chat template, exactly as Hugging Face renders it",
		Long: "Render --messages (a JSON array of chat messages, as the chat API and transformers take them:\n" +
			"content a string or a list of text parts, tool_calls with arguments as an object, tool messages)\n" +
			"with the chat template of --model (tokenizer.chat_template, with the vocabulary's BOS and EOS\n" +
			"texts) or of --template FILE (with --bos and --eos, default empty), as transformers'\n" +
			"apply_chat_template renders it (Jinja2's sandbox, trim_blocks, lstrip_blocks), and print the text\n" +
			"exactly, nothing added. --tools is the JSON array of tool definitions (absent: tools is None);\n" +
			"--now (RFC 3339, default the current time) is what strftime_now formats. The render runs in the\n" +
			"WebAssembly sandbox, bounded in time, memory and output. A template that fails exits 1 with its\n" +
			"own message and line; one past the sandbox's limits exits 3.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return templateRender(cmd, &o) },
	}
	f := cmd.Flags()
	f.StringVarP(&o.model, "model", "m", "", "the GGUF file whose chat template (tokenizer.chat_template) renders")
	f.StringVar(&o.template, "template", "", "a Jinja chat template file (instead of --model)")
	f.StringVar(&o.bos, "bos", "", "bos_token with --template")
	f.StringVar(&o.eos, "eos", "", "eos_token with --template")
	f.StringVar(&o.messages, "messages", "", "the conversation: a JSON array of message objects, or @FILE")
	f.StringVar(&o.tools, "tools", "", "the tool definitions: a JSON array, or @FILE")
	f.BoolVar(&o.noGenPrompt, "no-generation-prompt", false, "render without the assistant's opening (add_generation_prompt false)")
	f.StringVar(&o.now, "now", "", "the time strftime_now formats, RFC 3339 (default now)")
	return cmd
}

func templateRender(cmd *cobra.Command, o *templateRenderOptions) error {
	ctx := cmd.Context()
	switch {
	case o.model != "" && o.template != "":
		return usage(errors.New("template render: --model and --template exclude each other"))
	case o.model == "" && o.template == "":
		return usage(errors.New("template render: --model or --template is required"))
	case o.model != "" && (cmd.Flags().Changed("bos") || cmd.Flags().Changed("eos")):
		return usage(errors.New("template render: --bos and --eos go with --template (a model has its own)"))
	case o.messages == "":
		return usage(errors.New("template render: --messages is required"))
	}
	msgs, err := messagesArg(o.messages)
	if err != nil {
		return err
	}
	opts := tokenizer.ChatOptions{AddGenerationPrompt: !o.noGenPrompt, BOS: o.bos, EOS: o.eos, Now: time.Now()}
	if o.tools != "" {
		if opts.Tools, err = jsonArrayArg(o.tools, "--tools"); err != nil {
			return err
		}
	}
	if o.now != "" {
		if opts.Now, err = time.Parse(time.RFC3339Nano, o.now); err != nil {
			return usage(fmt.Errorf("template render: --now: %w", err))
		}
	}
	var template string
	if o.template != "" {
		in, err := readInput("--template", o.template)
		if err != nil {
			return err
		}
		template = string(in.text)
	} else {
		tok, err := tokenizer.Open(o.model)
		if err != nil {
			return badFile(fmt.Errorf("%s: %w", o.model, err))
		}
		if template = tok.ChatTemplate(); template == "" {
			return failure(fmt.Errorf("%s has no chat template (tokenizer.chat_template); use --template", o.model))
		}
		opts.BOS, opts.EOS = tok.TokenText(tok.BOS()), tok.TokenText(tok.EOS())
	}
	r, cache, err := newSandbox(ctx)
	if err != nil {
		return err
	}
	defer func() {
		_ = r.Close(ctx)
		_ = cache.Close(ctx)
	}()
	out, err := r.Render(ctx, template, msgs, opts)
	if err != nil {
		return templateFailure(ctx, err)
	}
	if _, err := io.WriteString(cmd.OutOrStdout(), out); err != nil {
		return failure(err)
	}
	return nil
}

// argInput is a flag's JSON text, or the file's after "@".
func argInput(arg, flag string) (input, error) {
	if path, ok := strings.CutPrefix(arg, "@"); ok {
		return readInput(flag, path)
	}
	return input{text: []byte(arg)}, nil
}

// jsonArrayArg reads a JSON array argument (or @FILE holding one).
func jsonArrayArg(arg, flag string) (json.RawMessage, error) {
	in, err := argInput(arg, flag)
	if err != nil {
		return nil, err
	}
	var items []json.RawMessage
	if err := json.Unmarshal(in.text, &items); err != nil || items == nil {
		return nil, in.refuse(fmt.Errorf("%s: not a JSON array", flag))
	}
	return json.RawMessage(bytes.TrimSpace(in.text)), nil
}

// messagesArg reads --messages: a JSON array of message objects, each
// passed to the template as it is.
func messagesArg(arg string) ([]tokenizer.Message, error) {
	in, err := argInput(arg, "--messages")
	if err != nil {
		return nil, err
	}
	var items []json.RawMessage
	if err := json.Unmarshal(in.text, &items); err != nil || items == nil {
		return nil, in.refuse(errors.New("--messages: not a JSON array of message objects"))
	}
	msgs := make([]tokenizer.Message, len(items))
	for i, raw := range items {
		var m struct {
			Role    string `json:"role"`
			Content any    `json:"content"`
		}
		if err := json.Unmarshal(raw, &m); err != nil || !bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) {
			return nil, in.refuse(fmt.Errorf("--messages: message %d is not a JSON object", i))
		}
		content, _ := m.Content.(string)
		msgs[i] = tokenizer.Message{Role: m.Role, Content: content, Raw: raw}
	}
	return msgs, nil
}
