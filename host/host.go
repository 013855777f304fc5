package host

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/abi/wasmfile"
	"github.com/realizar-host/realizar-host/internal/lru"
)

// Host loads, compiles and runs plugins. It owns one wazero Runtime and its
// compilation cache; compiled modules are kept by namespace and sha256
// (LoadOptions.Namespace), the least recently used dropped past
// Config.WithModuleCacheBytes (or by Evict), and all of them at Close. A
// dropped module's code is closed as soon as no open Plugin or adapter of
// it is left (Plugin.Close). Safe for concurrent use.
type Host struct {
	cfg   Config
	rt    wazero.Runtime
	cache wazero.CompilationCache
	disk  *diskCache // nil without Config.WithCompilationCacheDir

	// allowed maps "module\x00name" to the type a plugin must import it with.
	allowed map[string]api.FunctionDefinition

	mu        sync.Mutex
	modules   *lru.Cache[cacheKey, *module] // charged their wasm size; each holds its code
	compiling map[cacheKey]*compilation     // while one runs
	dropped   []*module                     // by the cache's budget, to release once unlocked
	closed    bool
	compiles  chan struct{} // a token per compilation running

	// memories counts guest linear memories allocated and not yet freed by
	// wazero: live instances, from wazero's side.
	memories atomic.Int64
	// compilations counts the compilations started (Compilations).
	compilations atomic.Int64
	// open counts the compiled modules not yet closed (CompiledModules).
	open atomic.Int64

	// growHook, when set (by tests), runs in every growth of a guest's
	// memory, where the host allocates and copies it.
	growHook func()
}

// cacheKey is a compiled module's identity: its namespace and the sha256
// of its bytes.
type cacheKey struct {
	ns  string
	sum [sha256.Size]byte
}

// New checks cfg and starts a Host. A default limit out of its range
// (WithLimits) is a *LimitError.
func New(ctx context.Context, cfg Config) (*Host, error) {
	switch {
	case cfg.maxModuleBytes <= 0:
		return nil, errors.New("host: max module bytes must be > 0")
	case cfg.maxConfigBytes <= 0:
		return nil, errors.New("host: max config bytes must be > 0")
	case cfg.logBytes <= 0:
		return nil, errors.New("host: log bytes must be > 0")
	case cfg.moduleCacheBytes < 0 || cfg.cacheDirBytes < 0:
		return nil, errors.New("host: module cache bytes must be >= 0")
	case cfg.compileTimeout <= 0 || cfg.compiles <= 0:
		return nil, errors.New("host: the compile timeout and concurrency must be > 0")
	}
	if err := cfg.limits.check(); err != nil {
		return nil, fmt.Errorf("host: %w", err)
	}
	h := &Host{cfg: cfg, compiling: map[cacheKey]*compilation{}, compiles: make(chan struct{}, cfg.compiles),
		allowed: map[string]api.FunctionDefinition{}}
	h.modules = lru.New(cfg.moduleCacheBytes, func(_ cacheKey, m *module) { h.dropped = append(h.dropped, m) })
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
		WithMemoryLimitPages(MaxMemoryPages))
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
	if cfg.cacheDir != "" {
		if h.disk, err = newDiskCache(ctx, h.rt, cfg.cacheDir, cfg.cacheDirBytes); err != nil {
			_ = h.rt.Close(ctx)
			return nil, err
		}
	}
	return h, nil
}

// check is nil when every field of l is in its range, else a *LimitError
// keyed by the Go field ("Limits.MemoryPages"). A zero field is filled
// from the defaults before check (or), so its ranges say "0 (the default)".
func (l Limits) check() error {
	switch {
	case l.MemoryPages == 0 || l.MemoryPages > MaxMemoryPages:
		return &LimitError{Key: "Limits.MemoryPages", Value: strconv.FormatUint(uint64(l.MemoryPages), 10),
			Range: fmt.Sprintf("0 (the default) to %d", MaxMemoryPages)}
	case l.CallTimeout <= 0:
		return &LimitError{Key: "Limits.CallTimeout", Value: l.CallTimeout.String(), Range: "0 (the default) or more"}
	case l.InitTimeout <= 0:
		return &LimitError{Key: "Limits.InitTimeout", Value: l.InitTimeout.String(), Range: "0 (the default) or more"}
	}
	return nil
}

// Close closes every instance and compiled module. Plugins and adapters of
// this Host stop working (their calls fail).
func (h *Host) Close(ctx context.Context) error {
	h.mu.Lock()
	h.closed = true
	var cached []*module
	for _, k := range h.modules.Keys() {
		m, _ := h.modules.Remove(k)
		cached = append(cached, m)
	}
	h.mu.Unlock()
	err := h.rt.Close(ctx) // the instances first
	releaseAll(cached)
	if cerr := h.cache.Close(ctx); err == nil {
		err = cerr
	}
	return err
}

// takeDropped returns the modules the cache's budget dropped since the
// last call, whose holds the caller releases once it has unlocked h.mu.
// h.mu is held.
func (h *Host) takeDropped() []*module {
	d := h.dropped
	h.dropped = nil
	return d
}

// LiveInstances is the number of guest linear memories wazero holds for
// this Host: one per live instance. Tests use it to check for leaks.
func (h *Host) LiveInstances() int { return int(h.memories.Load()) }

// compilation is one module's compilation in flight; done is closed when
// m or err is set. evicted (under the Host's lock) is set by an Evict of
// its module meanwhile: the module is then not cached.
type compilation struct {
	done    chan struct{}
	m       *module
	err     error
	evicted bool
}

// compile returns the compiled module for wasm with a hold for the caller
// to release, compiling it once per key while it stays in the cache. The
// compilation runs outside the Host's lock (other Loads, instances and
// calls go on), after a pre-scan of its code against the Config's
// CodeLimits, under the Config's concurrency and timeout and ctx; Loads
// of the same module wait for the one running (or for their own ctx).
func (h *Host) compile(ctx context.Context, key cacheKey, wasm []byte) (*module, error) {
	for {
		h.mu.Lock()
		if h.closed {
			h.mu.Unlock()
			return nil, ErrClosed
		}
		if m, ok := h.modules.Get(key); ok {
			m.acquire() // open: the cache holds it
			h.mu.Unlock()
			return m, nil
		}
		c, ok := h.compiling[key]
		if !ok {
			break // compiled here, h.mu held
		}
		h.mu.Unlock()
		select {
		case <-c.done:
			if c.err != nil {
				return nil, c.err
			}
			if c.m.acquire() {
				return c.m, nil
			}
			// Evicted and closed meanwhile: compiled again.
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
	c := &compilation{done: make(chan struct{})}
	h.compiling[key] = c
	h.mu.Unlock()

	c.m, c.err = h.compileNow(ctx, key, wasm)
	if c.err == nil && h.disk != nil {
		h.disk.used(key, wasm)
	}
	h.mu.Lock()
	delete(h.compiling, key)
	evicted := c.evicted
	if c.err == nil && !h.closed && !evicted {
		c.m.acquire() // the cache's hold
		h.modules.Add(key, c.m, int64(len(wasm)))
	}
	dropped := h.takeDropped()
	h.mu.Unlock()
	close(c.done)
	releaseAll(dropped)
	if c.err == nil && evicted && h.disk != nil {
		h.disk.release(key, wasm)
	}
	return c.m, c.err
}

// compileNow scans and compiles wasm under the concurrency limit and the
// compile timeout.
func (h *Host) compileNow(ctx context.Context, key cacheKey, wasm []byte) (*module, error) {
	if _, err := wasmfile.ScanCode(wasm, h.cfg.codeLimits); err != nil {
		if errors.Is(err, wasmfile.ErrCodeLimit) {
			return nil, fmt.Errorf("%w: %w", ErrTooLarge, err)
		}
		return nil, err
	}
	select {
	case h.compiles <- struct{}{}:
		defer func() { <-h.compiles }()
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting to compile: %w", context.Cause(ctx))
	}
	ctx, cancel := context.WithTimeoutCause(ctx, h.cfg.compileTimeout,
		fmt.Errorf("%w: compilation past %v", ErrTooLarge, h.cfg.compileTimeout))
	defer cancel()
	h.compilations.Add(1)
	// Workers compile functions in parallel and check ctx between them
	// (wazero's single-goroutine compiler never looks at it).
	c, err := h.rt.CompileModule(experimental.WithCompilationWorkers(ctx, runtime.GOMAXPROCS(0)), wasm)
	if err == nil && ctx.Err() != nil {
		// Finished past the deadline: refused, and its file goes too.
		_ = c.Close(context.Background())
		if h.disk != nil {
			h.disk.release(key, wasm)
		}
		err = context.Cause(ctx)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("compile: %w", context.Cause(ctx))
		}
		return nil, err
	}
	return h.newModule(key, c), nil
}

// discard drops m from the cache, memory and disk, as a module refused
// after its compilation (its exports' types, or its first Plugin's
// limits) is dropped: its code is closed once the caller releases its
// hold, if no Plugin of it is open.
func (h *Host) discard(m *module) {
	h.mu.Lock()
	cur, ok := h.modules.Get(m.key)
	if ok = ok && cur == m; ok {
		h.modules.Remove(m.key)
	}
	h.mu.Unlock()
	if ok {
		m.release() // the cache's hold
	}
	if h.disk != nil {
		h.disk.release(m.key, nil)
	}
}

// Evict drops the compiled module of sha256Hex (64 lowercase hex digits)
// in namespace (LoadOptions.Namespace) from the cache, as when its plugin
// is deleted, and its file from the compilation cache dir if this Host
// compiled or read it (EvictModule also finds one an earlier process
// wrote). It reports whether either was there. Open Plugins and adapters
// of it keep working; its code is closed at once when none is left, else
// when the last of them is closed. A compilation of it in flight is not
// cached when it ends. The next Load compiles it again; a sha256-only
// manifest no longer finds it (ErrUnknownModule).
func (h *Host) Evict(namespace, sha256Hex string) bool {
	key := cacheKey{ns: namespace}
	if n, err := hex.Decode(key.sum[:], []byte(sha256Hex)); err != nil || n != sha256.Size {
		return false
	}
	return h.evict(key, nil)
}

// EvictModule is Evict for the module wasm: its file in the compilation
// cache dir is found from its bytes, so one written by an earlier process
// goes too.
func (h *Host) EvictModule(namespace string, wasm []byte) bool {
	compiled, err := compiledBytes(namespace, wasm)
	if err != nil {
		return false // never compiled
	}
	return h.evict(cacheKey{ns: namespace, sum: sha256.Sum256(wasm)}, compiled)
}

func (h *Host) evict(key cacheKey, compiled []byte) bool {
	h.mu.Lock()
	m, ok := h.modules.Remove(key)
	if c, running := h.compiling[key]; running {
		c.evicted = true
	}
	h.mu.Unlock()
	if ok {
		m.release() // the cache's hold
	}
	if h.disk != nil && h.disk.release(key, compiled) {
		ok = true
	}
	return ok
}

// NamespaceSection is the custom section through which a module's
// namespace (LoadOptions.Namespace, when not "") joins the bytes the Host
// compiles: wazero's own caches, in memory and on disk, are keyed by
// those bytes' hash, so the same module in two namespaces is two
// compilations that share nothing.
const NamespaceSection = "realizar.namespace"

// compiledBytes is what the Host compiles for wasm in namespace: wasm
// itself in "", else wasm with its NamespaceSection set to namespace.
func compiledBytes(namespace string, wasm []byte) ([]byte, error) {
	if namespace == "" {
		return wasm, nil
	}
	return wasmfile.SetCustomSection(wasm, NamespaceSection, []byte(namespace))
}

// CachedModules is the number of compiled modules in the cache and the
// bytes they are charged (their modules' sizes).
func (h *Host) CachedModules() (modules int, bytes int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.modules.Len(), h.modules.Bytes()
}

// CompiledOnDisk is the number of files of the compilation cache dir this
// Host charges (Config.WithCompilationCacheDirBytes) and their bytes; 0, 0
// without a dir.
func (h *Host) CompiledOnDisk() (files int, bytes int64) {
	if h.disk == nil {
		return 0, 0
	}
	return h.disk.usage()
}

// CompiledModules is the number of compiled modules whose code this Host
// holds (compiled and not yet closed): those in the cache, and those
// dropped from it that an open Plugin or adapter still holds. Tests use
// it to check that a deleted or refused module's code is released.
func (h *Host) CompiledModules() int { return int(h.open.Load()) }

// Compilations is the number of compilations this Host has started, each
// for a Load that found its module (namespace and sha256) neither cached
// nor compiling, whether or not it succeeded. wazero's compilation cache
// dir may serve one of them from a file written by an earlier process.
func (h *Host) Compilations() int64 { return h.compilations.Load() }
