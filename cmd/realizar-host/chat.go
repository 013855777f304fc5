package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/realizar-host/realizar-host/engine"
	"github.com/realizar-host/realizar-host/forward"
	"github.com/realizar-host/realizar-host/tokenizer"
)

func newChatCmd() *cobra.Command {
	var (
		mf     modelFlags
		pf     policyFlags
		tf     turnFlags
		system string
	)
	cmd := &cobra.Command{
		Use:   "chat --model M.gguf [--system TEXT] [flags]",
		Short: "Chat with a model, one line per message, using its chat template",
		Long: "An interactive chat: each line read from stdin is a user message; the reply streams to\n" +
			"stdout and a stats line (with the prompt tokens reused from the previous turn) to stderr.\n" +
			"/reset starts a new conversation, /exit (or end of input) quits.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			cfg, err := tf.config(cmd)
			if err != nil {
				return err
			}
			g, err := newGenerator(ctx, cmd, &mf, &pf, &tf)
			if err != nil {
				return err
			}
			defer g.Close(ctx)
			ct, err := openChatTemplate(ctx, mf.path, g.model.tok)
			if err != nil {
				return err
			}
			defer ct.Close(ctx)
			c := &chat{ctx: ctx, g: g, tmpl: ct, system: system, cfg: cfg, out: cmd.OutOrStdout(), errOut: cmd.ErrOrStderr(), pluginLog: pf.pluginLog}
			return c.loop(cmd.InOrStdin())
		},
	}
	mf.register(cmd)
	pf.register(cmd)
	tf.register(cmd)
	cmd.Flags().StringVar(&system, "system", "", "a system message that opens the conversation")
	return cmd
}

// chat is a conversation: its messages and the tokens the Session holds.
type chat struct {
	ctx       context.Context
	g         *generator
	tmpl      *chatTemplate
	system    string
	cfg       engine.GenerateConfig
	out       io.Writer
	errOut    io.Writer
	pluginLog bool

	msgs []tokenizer.Message
	// held is the conversation so far as tokens the Session has seen, and
	// heldText the rendering they stand for exactly. The next prompt, when
	// its rendering extends heldText, is held followed by the tokens of the
	// new text, so the Session reuses everything it holds. Both are empty
	// after /reset or when the last reply's tokens and text disagree (a
	// trimmed stop string).
	held     []int32
	heldText string
}

// loop reads messages until /exit or the end of input.
func (c *chat) loop(in io.Reader) error {
	interactive := false
	if f, ok := in.(*os.File); ok {
		interactive = isTerminal(f)
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	c.reset()
	for {
		if interactive {
			fmt.Fprint(c.errOut, "> ")
		}
		if !sc.Scan() {
			break
		}
		line := strings.TrimSpace(sc.Text())
		switch line {
		case "":
			continue
		case "/exit", "/quit":
			return nil
		case "/reset":
			c.reset()
			fmt.Fprintln(c.errOut, "(conversation reset)")
			continue
		}
		if err := c.turn(line); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return failure(fmt.Errorf("reading stdin: %w", err))
	}
	return nil
}

// reset forgets the conversation.
func (c *chat) reset() {
	c.msgs = c.msgs[:0]
	if c.system != "" {
		c.msgs = append(c.msgs, tokenizer.Message{Role: "system", Content: c.system})
	}
	c.held, c.heldText = nil, ""
}

// turn answers one user message: the reply streams to out, then a newline
// and the stats line on errOut.
func (c *chat) turn(message string) error {
	c.msgs = append(c.msgs, tokenizer.Message{Role: "user", Content: message})
	promptText, err := c.tmpl.apply(c.ctx, c.msgs, tokenizer.ChatOptions{AddGenerationPrompt: true})
	if err != nil {
		return err
	}
	prompt := c.promptTokens(promptText)
	if n := c.g.model.fwd.ContextLength(); len(prompt) >= n {
		return &cmdError{code: exitContext, err: fmt.Errorf("the conversation has %d tokens, the context holds %d (/reset starts over): %w",
			len(prompt), n, forward.ErrContextExceeded)}
	}
	t, err := c.g.generate(c.ctx, prompt, c.cfg, c.out)
	fmt.Fprintln(c.out)
	if c.pluginLog {
		c.g.pol.writeLogs(c.errOut)
	}
	if err != nil {
		return turnError(err)
	}
	fmt.Fprintln(c.errOut, statsLine(t, c.g.newDraft != nil, nil))
	if t.Stop == engine.StopCancelled {
		return &cmdError{code: exitInterrupted, err: errors.New("interrupted")}
	}
	c.remember(promptText, t)
	return nil
}

// promptTokens tokenizes the rendered conversation, reusing held when the
// rendering extends heldText.
func (c *chat) promptTokens(promptText string) []int32 {
	tok := c.g.model.tok
	if len(c.held) == 0 || !strings.HasPrefix(promptText, c.heldText) {
		return encodePrompt(tok, promptText)
	}
	delta := tok.Encode(promptText[len(c.heldText):], tokenizer.EncodeOptions{ParseSpecial: true})
	return append(slices.Clip(c.held), delta...)
}

// remember records the reply of turn t (whose prompt rendered as
// promptText) and what the Session now holds.
func (c *chat) remember(promptText string, t engine.Turn) {
	tok := c.g.model.tok
	reply := string(t.Text)
	c.msgs = append(c.msgs, tokenizer.Message{Role: "assistant", Content: reply})
	gen := t.GeneratedTokens()
	keep := gen
	ended := t.Stop == engine.StopEOG || t.Stop == engine.StopToken
	if ended {
		keep = gen[:len(gen)-1] // the end token has no text in Turn.Text
	}
	// The raw pieces, control tokens as their text: a reply that hid one
	// (no --special) is not what its tokens re-encode from, so nothing
	// more is held.
	var text []byte
	for _, id := range keep {
		text = append(text, tok.Piece(id)...)
	}
	if string(text) != reply {
		c.held, c.heldText = nil, ""
		return
	}
	prompt := t.Tokens[:len(t.Tokens)-t.Generated]
	c.held = append(slices.Clone(prompt), keep...)
	c.heldText = promptText + reply
	if ended {
		// Keep the end token when the template writes it right after the
		// reply (ChatML's <|im_end|>): the next turn then forwards it.
		end := tok.TokenText(gen[len(gen)-1])
		rendered, _ := c.tmpl.apply(c.ctx, c.msgs, tokenizer.ChatOptions{}) // on an error, "" keeps nothing more
		if strings.HasPrefix(rendered, c.heldText+end) {
			c.held = append(c.held, gen[len(gen)-1])
			c.heldText += end
		}
	}
}
