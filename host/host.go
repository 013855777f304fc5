package host

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/realizar-host/realizar-host/abi"
)

// Host loads, compiles and runs plugins. It owns one wazero Runtime and its
// compilation cache; compiled modules are kept by sha256 until Close. Safe
// for concurrent use.
type Host struct {
	cfg   Config
	rt    wazero.Runtime
	cache wazero.CompilationCache

	// allowed maps "module\x00name" to the type a plugin must import it with.
	allowed map[string]api.FunctionDefinition

	mu       sync.Mutex
	compiled map[[sha256.Size]byte]wazero.CompiledModule
	known    map[[sha256.Size]byte]*Plugin // first Plugin per module, for sha256-only manifests
	closed   bool

	// memories counts guest linear memories allocated and not yet freed by
	// wazero: live instances, from wazero's side.
	memories atomic.Int64
}

// New checks cfg and starts a Host.
func New(ctx context.Context, cfg Config) (*Host, error) {
	switch {
	case cfg.maxModuleBytes <= 0:
		return nil, errors.New("host: max module bytes must be > 0")
	case cfg.maxConfigBytes <= 0:
		return nil, errors.New("host: max config bytes must be > 0")
	case cfg.logBytes <= 0:
		return nil, errors.New("host: log bytes must be > 0")
	}
	if err := cfg.limits.check(); err != nil {
		return nil, err
	}
	h := &Host{cfg: cfg, compiled: map[[sha256.Size]byte]wazero.CompiledModule{},
		known: map[[sha256.Size]byte]*Plugin{}, allowed: map[string]api.FunctionDefinition{}}
	var err error
	if cfg.cacheDir != "" {
		if h.cache, err = wazero.NewCompilationCacheWithDir(cfg.cacheDir); err != nil {
			return nil, fmt.Errorf("host: compilation cache %s: %w", cfg.cacheDir, err)
		}
	} else {
		h.cache = wazero.NewCompilationCache()
	}
	// The page cap is enforced per instance by the memory allocator
	// (memory.go); the runtime allows the wasm32 maximum.
	h.rt = wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().
		WithCloseOnContextDone(true).
		WithCompilationCache(h.cache).
		WithMemoryLimitPages(maxMemoryPages))
	for _, m := range []struct {
		name  string
		funcs []hostFunc
	}{{abi.ImportModule, realizarFuncs}, {abi.WASIModule, wasiFuncs}} {
		defs, err := instantiateHostModule(ctx, h.rt, m.name, m.funcs)
		if err != nil {
			_ = h.rt.Close(ctx)
			return nil, fmt.Errorf("host: define %s: %w", m.name, err)
		}
		for name, d := range defs {
			h.allowed[m.name+"\x00"+name] = d
		}
	}
	return h, nil
}

func (l Limits) check() error {
	switch {
	case l.MemoryPages == 0 || l.MemoryPages > maxMemoryPages:
		return fmt.Errorf("host: memory cap %d pages is not in [1, %d]", l.MemoryPages, maxMemoryPages)
	case l.CallTimeout <= 0:
		return errors.New("host: call timeout must be > 0")
	case l.InitTimeout <= 0:
		return errors.New("host: init timeout must be > 0")
	}
	return nil
}

// Close closes every instance and compiled module. Plugins and adapters of
// this Host stop working (their calls fail).
func (h *Host) Close(ctx context.Context) error {
	h.mu.Lock()
	h.closed = true
	h.mu.Unlock()
	err := h.rt.Close(ctx)
	if cerr := h.cache.Close(ctx); err == nil {
		err = cerr
	}
	return err
}

// LiveInstances is the number of guest linear memories wazero holds for
// this Host: one per live instance. Tests use it to check for leaks.
func (h *Host) LiveInstances() int { return int(h.memories.Load()) }

// compile returns the compiled module for wasm, compiling it once per sha256.
func (h *Host) compile(ctx context.Context, sum [sha256.Size]byte, wasm []byte) (wazero.CompiledModule, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, ErrClosed
	}
	if c, ok := h.compiled[sum]; ok {
		return c, nil
	}
	c, err := h.rt.CompileModule(ctx, wasm)
	if err != nil {
		return nil, err
	}
	h.compiled[sum] = c
	return c, nil
}
