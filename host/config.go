package host

import (
	"time"

	"github.com/realizar-host/realizar-host/abi/wasmfile"
)

// Config holds a Host's settings. It is immutable: each WithX returns a
// changed copy. Values are checked by New.
type Config struct {
	maxModuleBytes int
	maxConfigBytes int
	logBytes       int
	limits         Limits
	cacheDir       string
	// cacheDirBytes bounds the files in cacheDir; 0: no bound.
	cacheDirBytes int64
	nanotime      func() int64
	// moduleCacheBytes bounds the compiled-module cache; 0: no bound.
	moduleCacheBytes int64
	codeLimits       wasmfile.CodeLimits
	compileTimeout   time.Duration
	compiles         int
}

// Compilation defaults: the deadline of one module's compilation, and how
// many modules compile at once (each compilation already uses every core).
const (
	DefaultCompileTimeout = 60 * time.Second
	DefaultCompiles       = 2
)

// Limits bound one plugin instance. A zero field means "the Host's default"
// in LoadOptions and a manifest.
type Limits struct {
	// MemoryPages caps the guest's linear memory, in 64 KiB pages. Default
	// DefaultMemoryPages.
	MemoryPages uint32
	// CallTimeout is the deadline of each per-step and per-turn call, in
	// CPU time of the thread the call runs on (Linux; wall time
	// elsewhere), so that time a loaded machine keeps the call waiting for
	// a CPU does not count: a guest is cut for the work it does, not for
	// the machine's other work. Default DefaultCallTimeout. It counts the
	// guest's time and the host
	// functions it calls, not the host's time growing the guest's memory
	// (allocating and copying it, which a loaded machine can make slower
	// than the deadline): a guest growing toward MemoryPages reaches the
	// cap and fails as ErrPluginMemory rather than ErrPluginTimeout.
	CallTimeout time.Duration
	// InitTimeout is the deadline of instantiation plus realizar_init,
	// in CPU time with memory growth not counted, as for CallTimeout.
	// Default DefaultInitTimeout.
	InitTimeout time.Duration
}

// Defaults.
const (
	// DefaultMemoryPages is 512 pages (32 MiB): a Go guest's ~49 pages at
	// start, a 151,936-entry logits buffer (594 KiB, 10 pages) and, for a
	// processor, its 1.2 MiB output region, with room for the Go heap to
	// grow by several 4 MiB arenas.
	DefaultMemoryPages = 512
	// DefaultCallTimeout is generous for one step at 152k vocab (a C guest
	// takes well under a millisecond of CPU) yet bounds a runaway guest.
	// It is the one declaration of the per-call and per-step default: a
	// tenant's step_deadline (tenancy.DefaultLimits) and the CLI's plugins
	// take it.
	DefaultCallTimeout = 250 * time.Millisecond
	// DefaultInitTimeout covers a Go guest's runtime start.
	DefaultInitTimeout = 2 * time.Second
	// DefaultMaxModuleBytes caps the size of a module: 16 MiB.
	DefaultMaxModuleBytes = 16 << 20
	// DefaultMaxConfigBytes caps a plugin's config: 64 KiB.
	DefaultMaxConfigBytes = 64 << 10
	// DefaultLogBytes bounds each instance's log (the last bytes are kept): 16 KiB.
	DefaultLogBytes = 16 << 10
	// MaxMemoryPages is the wasm32 maximum, 65536 pages (4 GiB): the
	// most a memory cap may be.
	MaxMemoryPages = 65536
)

// NewConfig returns the defaults.
func NewConfig() Config {
	return Config{
		maxModuleBytes: DefaultMaxModuleBytes,
		maxConfigBytes: DefaultMaxConfigBytes,
		logBytes:       DefaultLogBytes,
		limits:         Limits{MemoryPages: DefaultMemoryPages, CallTimeout: DefaultCallTimeout, InitTimeout: DefaultInitTimeout},
		codeLimits:     wasmfile.DefaultCodeLimits,
		compileTimeout: DefaultCompileTimeout,
		compiles:       DefaultCompiles,
		cacheDirBytes:  DefaultCompilationCacheDirBytes,
	}
}

// WithCodeLimits sets what Load will compile: a module past one of lim
// (wasmfile.ScanCode, run before the compiler) is ErrTooLarge. Default
// wasmfile.DefaultCodeLimits.
func (c Config) WithCodeLimits(lim wasmfile.CodeLimits) Config { c.codeLimits = lim; return c }

// WithCompileTimeout sets the deadline of one module's compilation (on
// top of the Load's context). Default DefaultCompileTimeout.
func (c Config) WithCompileTimeout(d time.Duration) Config { c.compileTimeout = d; return c }

// WithCompiles sets how many modules may compile at once; the others
// wait (under their Load's context). Default DefaultCompiles.
func (c Config) WithCompiles(n int) Config { c.compiles = n; return c }

// WithMaxModuleBytes sets the largest module Load accepts, in bytes.
func (c Config) WithMaxModuleBytes(n int) Config { c.maxModuleBytes = n; return c }

// WithMaxConfigBytes sets the largest plugin config, in bytes.
func (c Config) WithMaxConfigBytes(n int) Config { c.maxConfigBytes = n; return c }

// WithLogBytes sets the size of each instance's log buffer, in bytes.
func (c Config) WithLogBytes(n int) Config { c.logBytes = n; return c }

// WithLimits sets the default per-instance limits; zero fields keep the
// current values.
func (c Config) WithLimits(l Limits) Config { c.limits = l.or(c.limits); return c }

// WithCompilationCacheDir keeps compiled code on disk in dir, so a restart
// does not compile again. Default: in memory only. The files are bounded
// by WithCompilationCacheDirBytes and deleted with their modules (Evict,
// a refused module); New fails if wazero lays dir out otherwise than this
// package knows (see diskcache.go).
func (c Config) WithCompilationCacheDir(dir string) Config { c.cacheDir = dir; return c }

// DefaultCompilationCacheDirBytes bounds the compilation cache dir: 1 GiB.
const DefaultCompilationCacheDirBytes = 1 << 30

// WithCompilationCacheDirBytes bounds the files of the compilation cache
// dir to n bytes of compiled code (their sizes on disk, the least recently
// compiled or loaded deleted first; the files found at New count, oldest
// first by modification time). 0: no bound. Default
// DefaultCompilationCacheDirBytes. It bounds what this Host knows of:
// several processes sharing one dir each keep their own count.
func (c Config) WithCompilationCacheDirBytes(n int64) Config { c.cacheDirBytes = n; return c }

// WithModuleCacheBytes bounds the cache of compiled modules to n bytes,
// counted as the modules' sizes (the wasm bytes; the compiled code is
// larger by a factor that depends on the module, see BENCHMARKS.md): past
// it the least recently loaded module is dropped, and compiled again when
// next loaded. Default 0: no bound (every module stays until Close or
// Evict). The on-disk cache has its own bound, WithCompilationCacheDirBytes.
func (c Config) WithModuleCacheBytes(n int64) Config { c.moduleCacheBytes = n; return c }

// WithNanotime replaces the monotonic clock plugins see (realizar.clock_ns
// and WASI clock_time_get) with f, whose value, in nanoseconds, the guest
// sees as is; tests pass a fake. Default: time since the instance was
// created.
func (c Config) WithNanotime(f func() int64) Config { c.nanotime = f; return c }

// or fills l's zero fields from d.
func (l Limits) or(d Limits) Limits {
	if l.MemoryPages == 0 {
		l.MemoryPages = d.MemoryPages
	}
	if l.CallTimeout == 0 {
		l.CallTimeout = d.CallTimeout
	}
	if l.InitTimeout == 0 {
		l.InitTimeout = d.InitTimeout
	}
	return l
}
