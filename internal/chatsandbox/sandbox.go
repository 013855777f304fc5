package chatsandbox

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"github.com/tetratelabs/wazero/sys"

	"github.com/realizar-host/realizar-host/internal/chatsandbox/wire"
	"github.com/realizar-host/realizar-host/internal/jinja"
	"github.com/realizar-host/realizar-host/tokenizer"
)

// guestGzip is the guest module, gzip-compressed (11.7 MB of wasm, 2.7 MB
// compressed: small enough to commit).
//
//go:embed wasm/render.wasm.gz
var guestGzip []byte

// guestWasm decompresses the guest for compilation; the bytes are not
// kept (a Renderer compiles once).
func guestWasm() ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(guestGzip))
	if err != nil {
		return nil, fmt.Errorf("chatsandbox: the embedded guest: %w", err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("chatsandbox: the embedded guest: %w", err)
	}
	return b, nil
}

// Defaults of Config: what a zero field means.
const (
	// DefaultMemoryBytes caps the guest's linear memory: 64 MiB (1024
	// pages of 64 KiB); real templates render in a few MiB.
	DefaultMemoryBytes = 64 << 20
	// DefaultTimeout bounds one Render: 2 s, far above the 30–60 ms a real
	// template takes in the sandbox (the guest's Go runtime start included;
	// BENCHMARKS.md).
	DefaultTimeout = 2 * time.Second
	// DefaultOutputBytes caps the rendered prompt: 1 MiB, far above any
	// context length in bytes.
	DefaultOutputBytes = 1 << 20
	// DefaultStackBytes caps the guest's goroutine stack: 8 MiB (recursive
	// macros).
	DefaultStackBytes = 8 << 20
	// DefaultConcurrent is the most renders at once: 8, so 512 MiB of guest
	// memory at most under DefaultMemoryBytes.
	DefaultConcurrent = 8
)

// errBytes caps what the guest's stderr keeps (its error message).
const errBytes = 4096

// Config sets a Renderer's budgets. The zero value means the defaults.
type Config struct {
	// MemoryBytes caps the guest's linear memory, in bytes, rounded down
	// to 64 KiB pages; zero means [DefaultMemoryBytes] (64 MiB). New refuses
	// a cap under 64 KiB or over 4 GiB.
	MemoryBytes uint64
	// Timeout bounds one Render: instantiation, the Go runtime's start and
	// the rendering; zero or negative means [DefaultTimeout] (2 s).
	Timeout time.Duration
	// OutputBytes caps the rendered text, in bytes; zero or negative means
	// [DefaultOutputBytes] (1 MiB).
	OutputBytes int
	// StackBytes caps the guest's goroutine stack, in bytes; zero or negative
	// means [DefaultStackBytes] (8 MiB).
	StackBytes int
	// Concurrent is the most renders running at once; more wait for a
	// place (under their caller's context, before their own deadline
	// starts), so that the sandbox's memory stays under Concurrent ×
	// MemoryBytes however many requests arrive; zero or negative means
	// [DefaultConcurrent] (8).
	// The places are shared: a caller that runs many slow templates at
	// once (the server bounds each tenant by its max_concurrent) makes
	// others wait, up to Timeout per place.
	Concurrent int
	// Cache, if set, is the wazero compilation cache to compile the guest
	// into (for example one with a directory, so that later processes skip
	// the compilation); else an in-memory cache of the Renderer's own.
	Cache wazero.CompilationCache
}

// Renderer renders chat templates in the sandbox. It holds one wazero
// runtime and the compiled guest. Safe for concurrent use; each Render
// runs its own instance.
type Renderer struct {
	cfg      Config
	rt       wazero.Runtime
	ownCache wazero.CompilationCache
	mod      wazero.CompiledModule
	places   chan struct{} // one token per running render
}

// New compiles the guest (once; a second Renderer on the same Cache reuses
// the compilation) and returns a Renderer. Close it when done.
func New(ctx context.Context, cfg Config) (*Renderer, error) {
	if cfg.MemoryBytes == 0 {
		cfg.MemoryBytes = DefaultMemoryBytes
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.OutputBytes <= 0 {
		cfg.OutputBytes = DefaultOutputBytes
	}
	if cfg.StackBytes <= 0 {
		cfg.StackBytes = DefaultStackBytes
	}
	if cfg.Concurrent <= 0 {
		cfg.Concurrent = DefaultConcurrent
	}
	pages := uint32(cfg.MemoryBytes >> 16)
	if pages == 0 || cfg.MemoryBytes > 4<<30 {
		return nil, fmt.Errorf("chatsandbox: memory cap %d bytes is not in [64 KiB, 4 GiB]", cfg.MemoryBytes)
	}
	r := &Renderer{cfg: cfg, places: make(chan struct{}, cfg.Concurrent)}
	cache := cfg.Cache
	if cache == nil {
		r.ownCache = wazero.NewCompilationCache()
		cache = r.ownCache
	}
	r.rt = wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().
		WithCloseOnContextDone(true).
		WithCompilationCache(cache).
		WithMemoryLimitPages(pages))
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, r.rt); err != nil {
		_ = r.Close(ctx)
		return nil, fmt.Errorf("chatsandbox: wasi: %w", err)
	}
	var err error
	wasm, err := guestWasm()
	if err != nil {
		_ = r.Close(ctx)
		return nil, err
	}
	// Compilation workers: parallel, and cancellable between functions
	// (wazero's single-goroutine compiler never looks at ctx), so that the
	// CLI's SIGINT stops a model's load here at once.
	if r.mod, err = r.rt.CompileModule(experimental.WithCompilationWorkers(ctx, runtime.GOMAXPROCS(0)), wasm); err != nil {
		_ = r.Close(ctx)
		return nil, fmt.Errorf("chatsandbox: compile guest: %w", err)
	}
	return r, nil
}

// Close frees the runtime and the compiled guest.
func (r *Renderer) Close(ctx context.Context) error {
	err := r.rt.Close(ctx)
	if r.ownCache != nil {
		if cerr := r.ownCache.Close(ctx); err == nil {
			err = cerr
		}
	}
	return err
}

// Func is Render bound to ctx, as a tokenizer.JinjaRenderer.
func (r *Renderer) Func(ctx context.Context) tokenizer.JinjaRenderer {
	return func(template string, msgs []tokenizer.Message, opts tokenizer.ChatOptions) (string, error) {
		return r.Render(ctx, template, msgs, opts)
	}
}

// Render renders template as tokenizer.RenderJinja does, in the sandbox
// (a zero opts.Now is the current time, read here: the guest has no
// clock). A template that does not parse or render is an error wrapping
// tokenizer.ErrTemplate and the *jinja.Error (errors.As) with its line
// and message. One that runs past the deadline, the memory or output cap
// or jinja.DefaultLimits' steps, or crashes the engine (a panic, a stack
// overflow) also wraps tokenizer.ErrTemplateLimit. ctx's
// cancellation stops the rendering too (an error wrapping ctx.Err()).
// Limit errors are a *LimitError naming the template by the sha256 of its
// text, never a file path.
func (r *Renderer) Render(ctx context.Context, template string, msgs []tokenizer.Message, opts tokenizer.ChatOptions) (string, error) {
	list, err := tokenizer.MessagesJSON(msgs)
	if err != nil {
		return "", err
	}
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	req := wire.Request{Template: template, Messages: list, Tools: opts.Tools,
		AddGenerationPrompt: opts.AddGenerationPrompt, BOS: opts.BOS, EOS: opts.EOS, Now: now.Format(time.RFC3339Nano), Vars: opts.Vars,
		MaxStack: r.cfg.StackBytes, MaxSteps: jinja.DefaultLimits.Steps, MaxBytes: r.cfg.OutputBytes}
	in, err := json.Marshal(req)
	if err != nil {
		return "", fmt.Errorf("chatsandbox: encode request: %w", err)
	}
	name := TemplateName(template)
	select {
	case r.places <- struct{}{}:
		defer func() { <-r.places }()
	case <-ctx.Done():
		return "", fmt.Errorf("%w %s: waiting for a place to render: %w", tokenizer.ErrTemplate, name, ctx.Err())
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	stdout := &capWriter{limit: r.cfg.OutputBytes}
	stderr := &capWriter{limit: errBytes}
	cfg := wazero.NewModuleConfig().
		WithName(""). // anonymous: concurrent instances do not clash
		WithStdin(bytes.NewReader(in)).
		WithStdout(stdout).
		WithStderr(stderr).
		WithSysNanotime().
		WithStartFunctions("_start")
	mod, err := r.rt.InstantiateModule(ctx, r.mod, cfg)
	if mod != nil {
		_ = mod.Close(context.Background())
	}
	var exit *sys.ExitError
	switch {
	case err == nil || (errors.As(err, &exit) && exit.ExitCode() == 0):
		if stdout.over {
			return "", limitErr(name, "output exceeds %d bytes", r.cfg.OutputBytes)
		}
		return stdout.buf.String(), nil
	case parent.Err() != nil: // the caller's cancellation, not the template's budget
		return "", fmt.Errorf("%w %s: %w", tokenizer.ErrTemplate, name, parent.Err())
	case ctx.Err() != nil:
		return "", limitErr(name, "rendering ran past %v", r.cfg.Timeout)
	case stdout.over:
		return "", limitErr(name, "output exceeds %d bytes", r.cfg.OutputBytes)
	case errors.As(err, &exit):
		msg := guestMessage(stderr.buf.String())
		switch exit.ExitCode() {
		case wire.ExitTemplate, wire.ExitLimit:
			var te wire.Error
			if err := json.Unmarshal(stderr.buf.Bytes(), &te); err != nil {
				return "", fmt.Errorf("%w: %s", tokenizer.ErrTemplate, msg)
			}
			je := &jinja.Error{Line: te.Line, Msg: te.Msg, Syntax: te.Syntax, Raised: te.Raised}
			if exit.ExitCode() == wire.ExitLimit {
				return "", limitErr(name, "%s", je.Error())
			}
			return "", tokenizer.TemplateErr(je)
		case wire.ExitPanic:
			return "", limitErr(name, "engine %s", msg)
		case wire.ExitFatal:
			return "", limitErr(name, "engine %s (memory cap %d MiB, stack cap %d MiB)", msg, r.cfg.MemoryBytes>>20, r.cfg.StackBytes>>20)
		}
		return "", limitErr(name, "guest exited %d: %s", exit.ExitCode(), msg)
	}
	// A trap: Go's wasm runtime does not survive memory.grow failing at
	// the cap (it faults on the memory it did not get).
	return "", limitErr(name, "engine trapped, most likely at the memory cap (%d MiB): %v", r.cfg.MemoryBytes>>20, trimTrap(err))
}

// TemplateName names a template in errors by its text's digest,
// "sha256:<12 hex>", never by the file it came from.
func TemplateName(template string) string {
	sum := sha256.Sum256([]byte(template))
	return "sha256:" + hex.EncodeToString(sum[:6])
}

// LimitError is a template the sandbox stopped: it ran past the deadline,
// the memory or output cap, or crashed the engine. errors.Is matches it
// to tokenizer.ErrTemplate and tokenizer.ErrTemplateLimit.
type LimitError struct {
	Template string // TemplateName of the template
	Reason   string // what stopped it, e.g. "rendering ran past 2s"
}

func (e *LimitError) Error() string {
	return "chat template " + e.Template + " exceeded its limits: " + e.Reason
}

// Is reports whether target is tokenizer.ErrTemplate or ErrTemplateLimit.
func (e *LimitError) Is(target error) bool {
	return target == tokenizer.ErrTemplate || target == tokenizer.ErrTemplateLimit
}

func limitErr(name, format string, args ...any) error {
	return &LimitError{Template: name, Reason: fmt.Sprintf(format, args...)}
}

// guestMessage is the first line that tells what went wrong in the guest's
// stderr: its own message, or the Go runtime's "fatal error: ..." line.
func guestMessage(s string) string {
	lines := strings.Split(s, "\n")
	for _, l := range lines {
		if strings.HasPrefix(l, "fatal error:") || strings.HasPrefix(l, "runtime:") {
			return strings.TrimSpace(l)
		}
	}
	if s = strings.TrimSpace(lines[0]); s == "" {
		return "no message"
	}
	return s
}

// trimTrap keeps wazero's trap message without its guest stack trace
// and module name.
func trimTrap(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	if _, after, ok := strings.Cut(s, "wasm error: "); ok {
		return after
	}
	return s
}

// capWriter keeps the first limit bytes written to it and fails past them.
type capWriter struct {
	buf   bytes.Buffer
	limit int
	over  bool
}

func (w *capWriter) Write(p []byte) (int, error) {
	if w.buf.Len()+len(p) > w.limit {
		w.over = true
		w.buf.Write(p[:w.limit-w.buf.Len()])
		return 0, errors.New("output cap")
	}
	return w.buf.Write(p)
}
