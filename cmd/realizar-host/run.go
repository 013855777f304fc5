package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/realizar-host/realizar-host/engine"
	"github.com/realizar-host/realizar-host/forward"
	"github.com/realizar-host/realizar-host/tokenizer"
)

// runOptions are run's own flags.
type runOptions struct {
	prompt, promptFile, system string
	chat, echo, asJSON         bool
}

func newRunCmd() *cobra.Command {
	var (
		mf modelFlags
		pf policyFlags
		tf turnFlags
		o  runOptions
	)
	cmd := &cobra.Command{
		Use:   "run --model M.gguf (--prompt TEXT | --prompt-file F | stdin) [flags]",
		Short: "Generate text from a prompt, streaming it to stdout",
		Long: "Generate text from a prompt. Only the generated text goes to stdout, as it is produced;\n" +
			"the load progress (on a terminal) and a stats line go to stderr. Ctrl-C stops the turn,\n" +
			"prints its stats and exits with status 130.\n\n" +
			"The prompt comes from exactly one source: --prompt, or --prompt-file, or stdin when neither\n" +
			"is given (stdin is then not read). Text from a file or stdin loses one trailing newline\n" +
			"(\"\\n\" or \"\\r\\n\"), so that `echo TEXT | realizar-host run` and --prompt TEXT agree.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runRun(cmd, &mf, &pf, &tf, &o) },
	}
	mf.register(cmd)
	pf.register(cmd)
	tf.register(cmd)
	fs := cmd.Flags()
	fs.StringVarP(&o.prompt, "prompt", "p", "", "the prompt text")
	fs.StringVarP(&o.promptFile, "prompt-file", "f", "", "read the prompt from a file")
	fs.StringVar(&o.system, "system", "", "a system message (implies --chat)")
	fs.BoolVar(&o.chat, "chat", false, "render the prompt as a user message with the model's chat template")
	fs.BoolVar(&o.echo, "echo", false, "print the prompt text before the generated text")
	fs.IntVar(&tf.logprobs, "logprobs", 0, "with --json: record each token's logprob and its N most likely alternatives")
	fs.BoolVar(&o.asJSON, "json", false, "print one JSON document (text, tokens, stop reason, seed, timings, logprobs) instead of streaming")
	return cmd
}

func runRun(cmd *cobra.Command, mf *modelFlags, pf *policyFlags, tf *turnFlags, o *runOptions) error {
	ctx := cmd.Context()
	cfg, err := tf.config(cmd)
	if err != nil {
		return err
	}
	if cmd.Flags().Changed("logprobs") {
		if !o.asJSON {
			return usage(errors.New("--logprobs needs --json"))
		}
		if tf.logprobs < 0 {
			return usage(fmt.Errorf("--logprobs %d is negative", tf.logprobs))
		}
		cfg.Logprobs, cfg.TopLogprobs = true, tf.logprobs
	}
	text, err := o.promptText(cmd.Flags(), cmd.InOrStdin())
	if err != nil {
		return err
	}
	g, err := newGenerator(ctx, cmd, mf, pf, tf)
	if err != nil {
		return err
	}
	defer g.Close(ctx)

	if o.chat || o.system != "" {
		var msgs []tokenizer.Message
		if o.system != "" {
			msgs = append(msgs, tokenizer.Message{Role: "system", Content: o.system})
		}
		msgs = append(msgs, tokenizer.Message{Role: "user", Content: text})
		ct, err := openChatTemplate(ctx, mf.path, g.model.tok)
		if err != nil {
			return err
		}
		defer ct.Close(ctx)
		if text, err = ct.apply(ctx, msgs, tokenizer.ChatOptions{AddGenerationPrompt: true}); err != nil {
			return err
		}
	}
	prompt := encodePrompt(g.model.tok, text)
	if n := g.model.fwd.ContextLength(); len(prompt) >= n {
		return &cmdError{code: exitContext, err: fmt.Errorf("the prompt has %d tokens, the context holds %d: %w", len(prompt), n, forward.ErrContextExceeded)}
	}

	stdout := cmd.OutOrStdout()
	var stream io.Writer
	if !o.asJSON {
		stream = stdout
		if o.echo {
			if _, err := io.WriteString(stdout, text); err != nil {
				return failure(err)
			}
		}
	}
	turn, genErr := g.generate(ctx, prompt, cfg, stream)
	if o.asJSON {
		if pf.pluginLog {
			g.pol.writeLogs(cmd.ErrOrStderr())
		}
		if err := encodeJSON(cmd, newTurnJSON(turn, g.text, g.model.took, g.pol, g.newDraft != nil, genErr)); err != nil {
			return err
		}
	} else {
		// The text ends the line it is on, so that the stats line starts
		// its own: on stdout for a terminal; on stderr when both go to the
		// same file (2>&1), so that stdout alone stays exactly the text.
		if isTerminal(stdout) {
			fmt.Fprintln(stdout)
		} else if sameFile(stdout, cmd.ErrOrStderr()) && len(turn.Text) > 0 && turn.Text[len(turn.Text)-1] != '\n' {
			fmt.Fprintln(cmd.ErrOrStderr())
		}
		if pf.pluginLog {
			g.pol.writeLogs(cmd.ErrOrStderr())
		}
		if genErr == nil || turn.Generated > 0 {
			fmt.Fprintln(cmd.ErrOrStderr(), statsLine(turn, g.newDraft != nil, genErr))
		}
	}
	if genErr != nil {
		return turnError(genErr)
	}
	if turn.Stop == engine.StopCancelled {
		return &cmdError{code: exitInterrupted, err: errors.New("interrupted")}
	}
	return nil
}

// promptText is the prompt from exactly one source: --prompt, or
// --prompt-file, or (when neither is given) stdin. Both flags at once is a
// usage error, and so is an explicit empty --prompt. Text from a file or
// stdin loses exactly one trailing newline ("\n" or "\r\n"), the one
// echo and editors add; --prompt is taken as is.
func (o *runOptions) promptText(fs *pflag.FlagSet, stdin io.Reader) (string, error) {
	promptSet := fs.Changed("prompt")
	switch {
	case promptSet && o.promptFile != "":
		return "", usage(errors.New("--prompt and --prompt-file both given"))
	case promptSet && o.prompt == "":
		return "", usage(errors.New("--prompt is empty"))
	case promptSet:
		return o.prompt, nil
	case o.promptFile != "":
		in, err := readInput("--prompt-file", o.promptFile)
		if err != nil {
			return "", err
		}
		text := trimNewline(string(in.text))
		if text == "" {
			return "", in.refuse(fmt.Errorf("--prompt-file %s is empty", o.promptFile))
		}
		return text, nil
	}
	if f, ok := stdin.(*os.File); ok && isTerminal(f) {
		return "", usage(errors.New("no prompt: pass --prompt TEXT, --prompt-file FILE, or pipe it on stdin"))
	}
	b, err := io.ReadAll(stdin)
	if err != nil {
		return "", failure(fmt.Errorf("reading the prompt from stdin: %w", err))
	}
	text := trimNewline(string(b))
	if text == "" {
		return "", usage(errors.New("empty prompt on stdin"))
	}
	return text, nil
}

// trimNewline removes one trailing "\n" or "\r\n" from s.
func trimNewline(s string) string {
	if t, ok := strings.CutSuffix(s, "\n"); ok {
		return strings.TrimSuffix(t, "\r")
	}
	return s
}
