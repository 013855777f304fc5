package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
)

// Exit statuses (documented in doc.go).
const (
	exitOK          = 0
	exitFailure     = 1
	exitUsage       = 2
	exitBadFile     = 3
	exitBadPlugin   = 4
	exitContext     = 5
	exitInterrupted = 130 // 128 + SIGINT, as shells report it
)

func main() {
	// The first SIGINT or SIGTERM cancels ctx: a running turn stops at its
	// next step and the command exits with exitInterrupted. The handler is
	// then removed, so a second Ctrl-C kills the process at once.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the command line args and returns the exit status. ctx is
// cancelled by an interrupt.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := &cobra.Command{
		Use:           "realizar-host",
		Short:         "Run and inspect GGUF language models",
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetArgs(args)
	root.AddCommand(newRunCmd(), newChatCmd(), newBenchCmd(), newPerplexityCmd(), newEmbedCmd(), newPluginCmd(),
		newInspectCmd(), newQuantizeCmd(), newFixtureCmd(), newServeCmd(), newGrammarCmd(), newTenantsCmd(), newTemplateCmd())
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	// One line, whatever the cause's text holds.
	fmt.Fprintln(stderr, "realizar-host: "+strings.ReplaceAll(strings.TrimSpace(err.Error()), "\n", " "))
	var ce *cmdError
	if errors.As(err, &ce) {
		return ce.code
	}
	// Errors that do not come from a command's RunE are cobra's own: an
	// unknown command or flag, or a wrong argument count.
	return exitUsage
}

// cmdError is an error from a command's RunE with its exit status.
type cmdError struct {
	code int
	err  error
}

func (e *cmdError) Error() string { return e.err.Error() }
func (e *cmdError) Unwrap() error { return e.err }

// badFile marks err as a problem with an input file (exit status 3).
func badFile(err error) error { return &cmdError{code: exitBadFile, err: err} }

// input is the text of an input that a flag or an argument gives: a
// FILE's, read, or the text itself, inline on the command line.
type input struct {
	text []byte
	file string // the file it was read from; "" for inline text
}

// readInput reads the FILE that flag names ("--prompt-file"). One that is
// missing or unreadable is a bad input file (exit status 3), as a missing
// model is: the one rule for every flag that names a file but the
// plugins' (status 4).
func readInput(flag, path string) (input, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return input{}, badFile(fmt.Errorf("%s: %w", flag, err))
	}
	return input{text: b, file: path}, nil
}

// refuse marks err, a fault of in's text (a grammar that does not parse,
// not a JSON object), by the same rule: read from a file, a bad input
// file (exit status 3); inline, a usage error (2), the fix being on the
// command line.
func (in input) refuse(err error) error {
	if in.file != "" {
		return badFile(err)
	}
	return usage(err)
}

// failure marks err as any other failure (exit status 1).
func failure(err error) error { return &cmdError{code: exitFailure, err: err} }

// usage marks err as a usage error (exit status 2).
func usage(err error) error { return &cmdError{code: exitUsage, err: err} }

// badPlugin marks err as a plugin that cannot be loaded or that failed
// (exit status 4).
func badPlugin(err error) error { return &cmdError{code: exitBadPlugin, err: err} }
