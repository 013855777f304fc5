package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/realizar-host/realizar-host/engine"
	"github.com/realizar-host/realizar-host/gguf"
	"github.com/realizar-host/realizar-host/model"
	"github.com/realizar-host/realizar-host/tokenizer"
)

// envModel names the model when --model is not given.
const envModel = "REALIZAR_MODEL"

// modelFlags are the flags every command that loads a model shares.
type modelFlags struct {
	path    string
	threads int
	ctxSize int
}

func (m *modelFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&m.path, "model", "m", "", "GGUF model file (default: $"+envModel+")")
	cmd.Flags().IntVarP(&m.threads, "threads", "t", 0, "worker threads for matrix products (default: all CPUs)")
	cmd.Flags().IntVarP(&m.ctxSize, "ctx-size", "c", 0, "context size in positions (default: the model's trained context)")
}

// resolve fills path from the environment and checks the numbers.
func (m *modelFlags) resolve() error {
	if m.path == "" {
		m.path = os.Getenv(envModel)
	}
	switch {
	case m.path == "":
		return usage(errors.New("no model: pass --model FILE.gguf or set " + envModel))
	case m.threads < 0:
		return usage(fmt.Errorf("--threads %d is negative", m.threads))
	case m.ctxSize < 0:
		return usage(fmt.Errorf("--ctx-size %d is negative", m.ctxSize))
	}
	return nil
}

// loaded is an open model ready for Sessions: the file, its tokenizer, the
// weights and one forward (a Session's state).
type loaded struct {
	file  *gguf.File
	tok   *tokenizer.Tokenizer
	model *model.Model
	fwd   *engine.Q4kForward
	// took is the wall time of the load, page-in included.
	took time.Duration
}

// loadModel opens the model named by flags, reads its weights into memory
// (with a progress bar on progress when it is a terminal) and builds a
// forward. Errors carry their exit status: a missing, malformed or
// unsupported file is exitBadFile.
func loadModel(flags *modelFlags, progress io.Writer) (*loaded, error) {
	start := time.Now()
	f, err := gguf.Open(flags.path)
	if err != nil {
		return nil, badFile(err)
	}
	l := &loaded{file: f}
	if err := l.build(flags, progress); err != nil {
		l.Close()
		return nil, err
	}
	l.took = time.Since(start)
	return l, nil
}

func (l *loaded) build(flags *modelFlags, progress io.Writer) error {
	var err error
	if l.tok, err = tokenizer.FromGGUF(l.file); err != nil {
		return badFile(fmt.Errorf("%s: %w", flags.path, err))
	}
	if l.model, err = model.Load(l.file, model.Options{Threads: flags.threads}); err != nil {
		return badFile(fmt.Errorf("%s: %w", flags.path, err))
	}
	if l.model.Config().Vocab != l.tok.Size() {
		return badFile(fmt.Errorf("%s: the tokenizer has %d tokens but the model %d", flags.path, l.tok.Size(), l.model.Config().Vocab))
	}
	if err := pageIn(l.file, progress); err != nil {
		return badFile(fmt.Errorf("%s: %w", flags.path, err))
	}
	l.fwd, err = engine.NewQ4kForward(l.model.NewStep(), engine.Q4kOptions{
		Arch:         l.model.Config().Arch,
		ModelContext: l.model.Config().ContextLength,
		MaxContext:   flags.ctxSize,
	})
	if err != nil {
		return badFile(fmt.Errorf("%s: %w", flags.path, err))
	}
	return nil
}

// Close releases the model and the file (in that order: the weights are
// views of the file's mapping).
func (l *loaded) Close() {
	if l.model != nil {
		_ = l.model.Close()
	}
	_ = l.file.Close()
}

// pageIn touches one byte in every 4 KiB page of every tensor, so that the
// file is read from disk now and not during the first tokens. When out is a
// terminal it shows a progress bar in bytes.
func pageIn(f *gguf.File, out io.Writer) error {
	var total int64
	for _, t := range f.Tensors {
		total += t.Size
	}
	bar := progressbar.DefaultBytesSilent(total)
	if isTerminal(out) {
		bar = progressbar.NewOptions64(total,
			progressbar.OptionSetWriter(out),
			progressbar.OptionSetDescription("loading"),
			progressbar.OptionShowBytes(true),
			progressbar.OptionSetWidth(30),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish(),
		)
	}
	var sink byte
	for _, t := range f.Tensors {
		data, err := f.TensorData(t.Name)
		if err != nil {
			return err
		}
		for i := 0; i < len(data); i += 4096 {
			sink ^= data[i]
		}
		_ = bar.Add64(t.Size)
	}
	_ = bar.Finish()
	pageSink = sink
	return nil
}

// pageSink keeps pageIn's reads from being optimised away.
var pageSink byte

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// sameFile reports whether a and b are the same open file (a terminal, a
// pipe, a regular file), as with 2>&1.
func sameFile(a, b io.Writer) bool {
	fa, ok1 := a.(*os.File)
	fb, ok2 := b.(*os.File)
	if !ok1 || !ok2 {
		return false
	}
	sa, err1 := fa.Stat()
	sb, err2 := fb.Stat()
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}
