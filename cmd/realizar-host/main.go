package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
)

// Exit statuses (documented in doc.go).
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
	exitBadFile = 3
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the command line args and returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	root := &cobra.Command{
		Use:           "realizar-host",
		Short:         "Run and inspect GGUF language models",
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetArgs(args)
	root.AddCommand(newInspectCmd(), newQuantizeCmd(), newFixtureCmd(), newServeCmd())
	err := root.Execute()
	if err == nil {
		return exitOK
	}
	fmt.Fprintln(stderr, "realizar-host: "+err.Error())
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

// failure marks err as any other failure (exit status 1).
func failure(err error) error { return &cmdError{code: exitFailure, err: err} }
