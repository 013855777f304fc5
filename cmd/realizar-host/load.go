package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/realizar-host/realizar-host/forward"
	"github.com/realizar-host/realizar-host/gguf"
	"github.com/realizar-host/realizar-host/internal/cuda"
	"github.com/realizar-host/realizar-host/model"
	"github.com/realizar-host/realizar-host/tokenizer"
)

// envModel names the model when --model is not given.
const envModel = "REALIZAR_MODEL"

// modelFlags are the flags every command that loads a model shares.
type modelFlags struct {
	path      string
	threads   int
	ctxSize   int
	gpu       bool
	gpuDevice int
}

func (m *modelFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&m.path, "model", "m", "", "GGUF model file (default: $"+envModel+")")
	cmd.Flags().IntVarP(&m.threads, "threads", "t", 0, "worker threads for matrix products (default: all CPUs)")
	cmd.Flags().IntVarP(&m.ctxSize, "ctx-size", "c", 0, "context size in positions (0, the default: the model's trained context)")
	cmd.Flags().BoolVar(&m.gpu, "gpu", false, "run the forward on a CUDA GPU (a build with -tags cuda); an error when no GPU can serve")
	cmd.Flags().IntVar(&m.gpuDevice, "gpu-device", 0, "CUDA device ordinal, with --gpu")
}

// modelPath is path, or $REALIZAR_MODEL when path is empty; neither is a
// usage error.
func modelPath(path string) (string, error) {
	if path == "" {
		path = os.Getenv(envModel)
	}
	if path == "" {
		return "", usage(errors.New("no model: pass --model FILE.gguf or set " + envModel))
	}
	return path, nil
}

// modelID is the name a model file is served and reported under: its base
// name without .gguf.
func modelID(path string) string { return strings.TrimSuffix(filepath.Base(path), ".gguf") }

// resolve fills path from the environment and checks the numbers.
func (m *modelFlags) resolve() error {
	var err error
	if m.path, err = modelPath(m.path); err != nil {
		return err
	}
	switch {
	case m.threads < 0:
		return usage(fmt.Errorf("--threads %d is negative", m.threads))
	case m.ctxSize < 0:
		return usage(fmt.Errorf("--ctx-size %d is negative", m.ctxSize))
	case m.gpuDevice < 0:
		return usage(fmt.Errorf("--gpu-device %d is negative", m.gpuDevice))
	}
	return nil
}

// loaded is an open model ready for Sessions: the file, its tokenizer, the
// weights and one forward (a Session's state).
type loaded struct {
	file  *gguf.File
	tok   *tokenizer.Tokenizer
	model *model.Model
	gpu   *cuda.Sequence // nil unless --gpu
	fwd   *forward.SequenceForward
	// took is the wall time of the load, page-in included.
	took time.Duration
}

// loadModel opens the model named by flags, reads its weights into memory
// (with a progress bar on progress when it is a terminal) and builds a
// forward. Errors carry their exit status: a missing, malformed or
// unsupported file is exitBadFile.
func loadModel(flags *modelFlags, progress io.Writer) (*loaded, error) {
	start := time.Now()
	f, err := openGGUF(flags.path)
	if err != nil {
		return nil, err
	}
	l := &loaded{file: f}
	if err := l.build(flags, progress); err != nil {
		l.Close()
		return nil, err
	}
	l.took = time.Since(start)
	return l, nil
}

// openGGUF opens the model file at path; every error is exitBadFile, and
// a directory is named as one (mapping it fails with "no such device").
func openGGUF(path string) (*gguf.File, error) {
	if err := notDir(path); err != nil {
		return nil, err
	}
	f, err := gguf.Open(path)
	if err != nil {
		return nil, badFile(err)
	}
	return f, nil
}

// notDir is an exitBadFile error when path is a directory.
func notDir(path string) error {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return badFile(fmt.Errorf("%s is a directory, not a GGUF file", path))
	}
	return nil
}

func (l *loaded) build(flags *modelFlags, progress io.Writer) error {
	var err error
	if l.tok, err = tokenizer.FromGGUF(l.file); err != nil {
		return badFile(fmt.Errorf("%s: %w", flags.path, err))
	}
	// The file is read in before the model is built: Load copies the Q4_K
	// matrices into panels and gives their file pages back, which a
	// page-in afterwards would read again.
	if err := pageIn(l.file, progress); err != nil {
		return badFile(fmt.Errorf("%s: %w", flags.path, err))
	}
	if l.model, err = model.Load(l.file, model.Options{Threads: flags.threads, ContextSize: flags.ctxSize}); err != nil {
		return badFile(fmt.Errorf("%s: %w", flags.path, err))
	}
	if l.model.Config().Vocab != l.tok.Size() {
		return badFile(fmt.Errorf("%s: the tokenizer has %d tokens but the model %d", flags.path, l.tok.Size(), l.model.Config().Vocab))
	}
	var seq forward.Sequence = l.model.NewSequence()
	if flags.gpu {
		if l.gpu, err = openGPU(flags, l.model, progress); err != nil {
			return err
		}
		seq = l.gpu
	}
	l.fwd, err = l.forward(seq, flags)
	if err != nil {
		return badFile(fmt.Errorf("%s: %w", flags.path, err))
	}
	if l.gpu != nil {
		// A fallback to the CPU after the start is loud: a line on stderr
		// (the cuda package writes it) and a notice on the forward.
		l.gpu.OnFallback(l.fwd.AddNotice)
	}
	return nil
}

// forward adapts step with the file's architecture and the context flags.
func (l *loaded) forward(seq forward.Sequence, flags *modelFlags) (*forward.SequenceForward, error) {
	return forward.NewSequenceForward(seq, forward.Options{
		Arch:         l.model.Config().Arch,
		ModelContext: l.model.Config().ContextLength,
		MaxContext:   flags.ctxSize,
	})
}

// newCPUForward is a further CPU forward over the loaded weights, with a
// KV cache of its own (the server's extra slots).
func (l *loaded) newCPUForward(flags *modelFlags) (forward.ArchForward, error) {
	return l.forward(l.model.NewSequence(), flags)
}

// newSequence is a further forward over the loaded weights with a KV cache
// of its own, on the device under --gpu: a serving core's
// Model.NewForward, for serve and bench --parallel alike.
func (l *loaded) newSequence(flags *modelFlags) (forward.ArchForward, error) {
	if l.gpu == nil {
		return l.newCPUForward(flags)
	}
	f, err := l.newGPUForward(flags)
	if err != nil {
		return nil, err // not a nil *SequenceForward in a non-nil interface
	}
	return f, nil
}

// newGPUForward is a further forward over the weights uploaded to the GPU,
// with a KV cache of its own on the device (the server's extra slots under
// --gpu); it falls back to the CPU on its own, loudly, as the first one
// does. Close it to free its device memory.
func (l *loaded) newGPUForward(flags *modelFlags) (*forward.SequenceForward, error) {
	st := l.gpu.NewSequence()
	fwd, err := l.forward(st, flags)
	if err != nil {
		_ = st.Close()
		return nil, err
	}
	st.OnFallback(fwd.AddNotice)
	return fwd, nil
}

// openGPU uploads m to the CUDA device --gpu names, behind the CPU parity
// gate whose verdicts are cached in the user's cache folder. An explicit
// --gpu that cannot be met (a build without -tags cuda, no driver, a tensor
// type without a kernel) is an error (exit 1), never a silent CPU run.
func openGPU(flags *modelFlags, m *model.Model, stderr io.Writer) (*cuda.Sequence, error) {
	opts := cuda.Options{Device: flags.gpuDevice, Stderr: stderr}
	if err := cuda.Available(flags.gpuDevice); err != nil {
		return nil, failure(fmt.Errorf("--gpu: %w", err))
	}
	if sum, err := cuda.FileSHA256(flags.path); err == nil {
		opts.FileSHA256 = sum
	}
	if dir, err := os.UserCacheDir(); err == nil {
		if cache, err := cuda.OpenVerdictCache(filepath.Join(dir, "realizar-host", "gpu-verdicts.json")); err == nil {
			opts.Verdicts = cache
		}
	}
	st, err := cuda.NewSequence(m, opts)
	if err != nil {
		return nil, failure(fmt.Errorf("--gpu: %w", err))
	}
	return st, nil
}

// Close releases the model and the file (in that order: the weights are
// views of the file's mapping).
func (l *loaded) Close() {
	if l.gpu != nil {
		_ = l.gpu.Close()
	}
	if l.model != nil {
		_ = l.model.Close()
	}
	_ = l.file.Close()
}

// pageIn touches one byte in every 4 KiB page of every tensor, so that the
// file is read from disk now and not during the first tokens. When out is a
// terminal it shows a progress bar counting tensors (the bytes of a mapped
// file come from the page cache at memory speed, so a byte rate would
// mislead), which ends at 100% and stays on screen.
func pageIn(f *gguf.File, out io.Writer) error {
	var bar *progressbar.ProgressBar
	if isTerminal(out) {
		bar = newLoadBar(out, len(f.Tensors))
	}
	return touchTensors(f, bar)
}

// newLoadBar is the load progress bar on out: n tensors, a line of its own.
func newLoadBar(out io.Writer, n int) *progressbar.ProgressBar {
	return progressbar.NewOptions(n,
		progressbar.OptionSetWriter(out),
		progressbar.OptionSetDescription("loading tensors"),
		progressbar.OptionShowCount(),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(out) }),
	)
}

// touchTensors reads one byte of every page of every tensor of f, counting
// each tensor on bar (nil for none) and finishing it.
func touchTensors(f *gguf.File, bar *progressbar.ProgressBar) error {
	var sink byte
	for _, t := range f.Tensors {
		data, err := f.TensorData(t.Name)
		if err != nil {
			return err
		}
		for i := 0; i < len(data); i += 4096 {
			sink ^= data[i]
		}
		if bar != nil {
			_ = bar.Add(1)
		}
	}
	if bar != nil {
		_ = bar.Finish()
	}
	pageSink = sink
	return nil
}

// pageSink keeps pageIn's reads from being optimised away: written, never
// read, on purpose.
//
//lint:ignore U1000 a sink is written only
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
