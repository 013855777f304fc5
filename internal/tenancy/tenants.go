package tenancy

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/realizar-host/realizar-host/host"
)

// ErrTenants is wrapped by every error reading a tenants file.
var ErrTenants = errors.New("tenancy: invalid tenants file")

// Limits bound one tenant. Zero fields take DefaultLimits' values.
type Limits struct {
	// MaxPluginBytes is the largest module the tenant may upload, in bytes.
	MaxPluginBytes int `json:"max_plugin_bytes"`
	// MemoryPages caps each plugin instance's memory, in 64 KiB pages.
	MemoryPages uint32 `json:"memory_pages"`
	// StepDeadline bounds each decode step's plugin calls together (the
	// processors', the sampler's and the stop policy's, the host functions
	// they call included; host.StepDeadline), and so each call (a reset
	// too), as a Go duration ("50ms") of the calls' own CPU time: the
	// forward's and other sequences' work do not count, nor time a loaded
	// machine keeps the calls waiting for a CPU (host.Limits.CallTimeout).
	StepDeadline Duration `json:"step_deadline"`
	// MaxConcurrent is the most requests of the tenant queued or running at once.
	MaxConcurrent int `json:"max_concurrent"`
	// RequestsPerMinute is the sustained request rate (burst: one minute's worth).
	RequestsPerMinute int `json:"requests_per_minute"`
	// MaxSequences is the most places of the batch the tenant holds at
	// once (its requests decoding together); the rest wait in the queue,
	// under MaxConcurrent. 0 means half of the server's Parallel, at least
	// 1, or all of it when the server has one tenant.
	MaxSequences int `json:"max_sequences"`
	// MaxQueued is the tenant's share of the server's queue: the most of
	// its requests admitted and not yet decoding (their bodies read and
	// prepared, or waiting for a place). Past it a request is a 429 tenant_queue_full whose
	// Retry-After is estimated from the tenant's own queue. 0 means half
	// of --queue, at least 1, or all of it when the server has one tenant.
	MaxQueued int `json:"max_queued"`
	// MaxKVBytes is the tenant's share of --kv-memory: the most KV cache
	// bytes its running requests reserve together (their draft model's
	// caches included, serving.KVDrafter). A request that does not
	// fit beside the tenant's others waits in the tenant's queue; one that
	// can never fit is a 400. 0 means half of --kv-memory, or all of it
	// when the server has one tenant.
	MaxKVBytes int64 `json:"max_kv_bytes"`
	// MaxPlugins is the most plugins the tenant may hold at once.
	MaxPlugins int `json:"max_plugins"`
	// MaxPluginTotalBytes is the most bytes the tenant's plugins may take
	// together. Over it, or over MaxPlugins, an upload is a 429
	// quota_exceeded; one module over MaxPluginBytes stays a 413.
	MaxPluginTotalBytes int64 `json:"max_plugin_total_bytes"`
}

// DefaultLimits are generous limits for a trusted deployment: 4 MiB
// plugins, host.DefaultMemoryPages (512 pages, 32 MiB) and
// host.DefaultCallTimeout (250 ms) per step, 16 concurrent requests, 600
// requests per minute, 64 plugins of 64 MiB together. The memory and the
// step deadline are the host's own defaults, which the CLI's plugins run
// under, so a plugin that runs under `run` or passes `plugin check` runs
// for a tenant too (host.DefaultMemoryPages says why 512: a Go-SDK
// processor at a 152k-token vocabulary, with room for its heap).
func DefaultLimits() Limits {
	return Limits{MaxPluginBytes: 4 << 20, MemoryPages: host.DefaultMemoryPages, StepDeadline: Duration(host.DefaultCallTimeout),
		MaxConcurrent: 16, RequestsPerMinute: 600, MaxPlugins: 64, MaxPluginTotalBytes: 64 << 20}
}

// Or returns l with its zero fields filled from d.
func (l Limits) Or(d Limits) Limits { return l.or(d) }

// or fills l's zero fields from d.
func (l Limits) or(d Limits) Limits {
	fill(&l.MaxPluginBytes, d.MaxPluginBytes)
	fill(&l.MemoryPages, d.MemoryPages)
	fill(&l.StepDeadline, d.StepDeadline)
	fill(&l.MaxConcurrent, d.MaxConcurrent)
	fill(&l.RequestsPerMinute, d.RequestsPerMinute)
	fill(&l.MaxPlugins, d.MaxPlugins)
	fill(&l.MaxPluginTotalBytes, d.MaxPluginTotalBytes)
	fill(&l.MaxSequences, d.MaxSequences)
	fill(&l.MaxQueued, d.MaxQueued)
	fill(&l.MaxKVBytes, d.MaxKVBytes)
	return l
}

// fill sets *x to d when *x is its type's zero.
func fill[T comparable](x *T, d T) {
	var zero T
	if *x == zero {
		*x = d
	}
}

// check reports the first limit out of range as a *host.LimitError
// naming its JSON key: a negative count, size or step_deadline, or
// memory_pages past host.MaxMemoryPages.
func (l Limits) check() error {
	if l.MemoryPages > host.MaxMemoryPages {
		return &host.LimitError{Key: "memory_pages", Value: strconv.FormatUint(uint64(l.MemoryPages), 10), Range: fmt.Sprintf("0 (the default) to %d", host.MaxMemoryPages)}
	}
	if l.StepDeadline < 0 {
		return &host.LimitError{Key: "step_deadline", Value: time.Duration(l.StepDeadline).String(), Range: "0 (the default) or more"}
	}
	for _, c := range []struct {
		key string
		v   int64
	}{
		{"max_plugin_bytes", int64(l.MaxPluginBytes)}, {"max_concurrent", int64(l.MaxConcurrent)},
		{"requests_per_minute", int64(l.RequestsPerMinute)}, {"max_sequences", int64(l.MaxSequences)},
		{"max_queued", int64(l.MaxQueued)}, {"max_kv_bytes", l.MaxKVBytes}, {"max_plugins", int64(l.MaxPlugins)},
		{"max_plugin_total_bytes", l.MaxPluginTotalBytes},
	} {
		if c.v < 0 {
			return &host.LimitError{Key: c.key, Value: strconv.FormatInt(c.v, 10), Range: "0 (the default) or more"}
		}
	}
	return nil
}

// HostLimits are the per-instance limits a tenant's plugins run under.
func (l Limits) HostLimits() host.Limits {
	return host.Limits{MemoryPages: l.MemoryPages, CallTimeout: time.Duration(l.StepDeadline)}
}

// Quota is the tenant's plugin quota: MaxPlugins and MaxPluginTotalBytes.
func (l Limits) Quota() Quota { return Quota{Plugins: l.MaxPlugins, Bytes: l.MaxPluginTotalBytes} }

// Duration is a time.Duration written in JSON as a Go duration string ("50ms").
type Duration time.Duration

func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("a duration is a string such as \"50ms\": %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// TenantSpec is one tenant in the tenants file.
type TenantSpec struct {
	// Name is the tenant's id: 1 to 64 of [a-z0-9_-]. It names the
	// tenant's plugin namespace and its metrics.
	Name string `json:"name"`
	// KeySHA256 lists the hex sha256 of each API key the tenant may use
	// (several, to rotate keys). The keys themselves are never stored.
	KeySHA256 []string `json:"key_sha256"`
	// Limits override the file's defaults field by field.
	Limits Limits `json:"limits"`
}

// TenantsFile is the tenants file: JSON.
//
//	{"defaults": {"max_concurrent": 8},
//	 "tenants": [{"name": "acme", "key_sha256": ["9f86d0…"], "limits": {"step_deadline": "50ms"}}]}
type TenantsFile struct {
	Defaults Limits       `json:"defaults"`
	Tenants  []TenantSpec `json:"tenants"`
}

var tenantName = regexp.MustCompile(`^[a-z0-9_-]{1,64}$`)

// Tenant is an authenticated tenant with its limits and limiters.
type Tenant struct {
	Name   string
	Limits Limits

	limiter *rate.Limiter
	mu      sync.Mutex
	active  int  // requests queued or running
	upload  bool // an upload is being read or compiled
}

// StartUpload marks an upload of t in flight, or reports false when one
// already is: a tenant compiles one upload at a time.
func (t *Tenant) StartUpload() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.upload {
		return false
	}
	t.upload = true
	return true
}

// EndUpload ends StartUpload's upload.
func (t *Tenant) EndUpload() {
	t.mu.Lock()
	t.upload = false
	t.mu.Unlock()
}

// Admit takes one of the tenant's concurrent slots and one request from
// its rate at now; the returned release gives the slot back. A refusal is
// a *LimitError.
func (t *Tenant) Admit(now time.Time) (release func(), err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.active >= t.Limits.MaxConcurrent {
		return nil, &LimitError{Code: codeConcurrency, RetryAfter: time.Second,
			Msg: fmt.Sprintf("tenant %s has %d requests in flight, its limit", t.Name, t.Limits.MaxConcurrent)}
	}
	r := t.limiter.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return nil, &LimitError{Code: CodeRate, RetryAfter: d,
			Msg: fmt.Sprintf("tenant %s is over %d requests per minute", t.Name, t.Limits.RequestsPerMinute)}
	}
	t.active++
	return func() {
		t.mu.Lock()
		t.active--
		t.mu.Unlock()
	}, nil
}

// Codes of a LimitError: the limit that refused the request.
const (
	// codeConcurrency: the tenant has MaxConcurrent requests in flight.
	codeConcurrency = "concurrency_limit_exceeded"
	// CodeRate: the tenant is over its RequestsPerMinute.
	CodeRate = "rate_limit_exceeded"
)

// LimitError is a request a tenant's limits refuse for now (Admit). The
// server answers it with a 429 rate_limit_error whose code is Code and
// whose Retry-After is RetryAfter.
type LimitError struct {
	// Code names the limit: CodeConcurrency or CodeRate.
	Code string
	// RetryAfter is when a retry may be admitted: 1 s for concurrency
	// (a request in flight may end by then), the rate limiter's delay
	// for the rate.
	RetryAfter time.Duration
	// Msg says which tenant and which limit, for the client.
	Msg string
}

func (e *LimitError) Error() string { return e.Msg }

// Tenants authenticates API keys. It is immutable and safe for concurrent use.
type Tenants struct {
	byHash    map[[sha256.Size]byte]*Tenant
	byName    map[string]*Tenant
	anonymous *Tenant // set when no keys are required
}

func newTenant(name string, l Limits) *Tenant {
	return &Tenant{Name: name, Limits: l,
		limiter: rate.NewLimiter(rate.Limit(float64(l.RequestsPerMinute)/60), l.RequestsPerMinute)}
}

// Anonymous returns Tenants that admit every request, with or without a key,
// as the tenant "anonymous" with limits l (zero fields: DefaultLimits).
func Anonymous(l Limits) *Tenants {
	t := newTenant("anonymous", l.or(DefaultLimits()))
	return &Tenants{byName: map[string]*Tenant{t.Name: t}, anonymous: t}
}

// LoadTenants reads a tenants file. Errors wrap ErrTenants and name the
// file and the tenant.
func LoadTenants(path string) (*Tenants, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrTenants, err)
	}
	t, err := ParseTenants(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// ParseTenants reads a tenants file's bytes (see TenantsFile).
func ParseTenants(b []byte) (*Tenants, error) {
	var f TenantsFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrTenants, err)
	}
	specs, err := f.Resolve()
	if err != nil {
		return nil, err
	}
	if len(specs) == 0 {
		return nil, fmt.Errorf("%w: no tenants", ErrTenants)
	}
	return NewTenants(specs, nil)
}

// Resolve checks the file and returns its tenants with the file's
// defaults filled into each one's limits: what the file sets, no more.
// The fields it leaves zero keep DefaultLimits' values when the tenants
// are made (NewTenants), so a store that imports the file (pgstore)
// keeps the built-in defaults out of each tenant's own limits, and a
// later default applies to them. Errors wrap ErrTenants and name the
// tenant.
func (f *TenantsFile) Resolve() ([]TenantSpec, error) {
	if err := f.Defaults.or(DefaultLimits()).check(); err != nil {
		return nil, fmt.Errorf("%w: defaults: %w", ErrTenants, err)
	}
	out := make([]TenantSpec, 0, len(f.Tenants))
	for _, spec := range f.Tenants {
		spec.Limits = spec.Limits.or(f.Defaults)
		if len(spec.KeySHA256) == 0 {
			return nil, fmt.Errorf("%w: tenant %s has no key_sha256", ErrTenants, spec.Name)
		}
		out = append(out, spec)
	}
	return out, nil
}

// NewTenants returns Tenants for specs, whose limits are complete (zero
// fields take DefaultLimits' values). A tenant of prev with the same name
// and limits is kept as it is, with its rate limiter and its requests in
// flight, so a store that reloads its tenants does not reset them; a
// tenant whose limits changed starts afresh. No tenants is allowed (every
// key is then a 401). Errors wrap ErrTenants and name the tenant: a name
// not of [a-z0-9_-]{1,64}, a duplicate name, a key that is not 64 hex
// digits, a key shared by two tenants, limits out of range.
func NewTenants(specs []TenantSpec, prev *Tenants) (*Tenants, error) {
	ts := &Tenants{byHash: map[[sha256.Size]byte]*Tenant{}, byName: map[string]*Tenant{}}
	for i, spec := range specs {
		if !ValidTenantName(spec.Name) {
			return nil, fmt.Errorf("%w: tenant %d: name %q is not 1 to 64 of [a-z0-9_-]", ErrTenants, i, spec.Name)
		}
		if _, dup := ts.byName[spec.Name]; dup {
			return nil, fmt.Errorf("%w: tenant %s appears twice", ErrTenants, spec.Name)
		}
		l := spec.Limits.or(DefaultLimits())
		if err := l.check(); err != nil {
			return nil, fmt.Errorf("%w: tenant %s: %w", ErrTenants, spec.Name, err)
		}
		t := newTenant(spec.Name, l)
		if prev != nil {
			if old := prev.byName[spec.Name]; old != nil && old.Limits == l {
				t = old
			}
		}
		ts.byName[t.Name] = t
		for _, h := range spec.KeySHA256 {
			sum, err := ParseKeySHA256(h)
			if err != nil {
				return nil, fmt.Errorf("%w: tenant %s: %w", ErrTenants, spec.Name, err)
			}
			if other, dup := ts.byHash[sum]; dup {
				return nil, fmt.Errorf("%w: tenants %s and %s share a key", ErrTenants, other.Name, spec.Name)
			}
			ts.byHash[sum] = t
		}
	}
	return ts, nil
}

// ValidTenantName reports whether name is a tenant name: 1 to 64 of [a-z0-9_-].
func ValidTenantName(name string) bool { return tenantName.MatchString(name) }

// ParseKeySHA256 reads a key's hex sha256 (64 hex digits, surrounding
// space ignored).
func ParseKeySHA256(h string) ([sha256.Size]byte, error) {
	raw, err := hex.DecodeString(strings.TrimSpace(h))
	if err != nil || len(raw) != sha256.Size {
		return [sha256.Size]byte{}, fmt.Errorf("key_sha256 %q is not 64 hex digits", h)
	}
	return [sha256.Size]byte(raw), nil
}

// CheckLimits reports whether l, once its zero fields take DefaultLimits'
// values, is in range.
func CheckLimits(l Limits) error { return l.or(DefaultLimits()).check() }

// TenantSource gives the server its tenants: the current set, read at
// each request. *Tenants is one (a fixed set, from a tenants file); a
// shared store returns a fresh set after each change it sees.
type TenantSource interface {
	// Tenants returns the current tenants; it is called once per request
	// and must be cheap and safe for concurrent use.
	Tenants() *Tenants
}

// Tenants implements TenantSource: a fixed set is its own source.
func (ts *Tenants) Tenants() *Tenants { return ts }

// HashKey returns the hex sha256 of an API key, as the tenants file stores it.
func HashKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// ErrNoKey is Authenticate's error for a request without an API key: a
// 401, code missing_api_key.
var ErrNoKey = errors.New("no API key: send Authorization: Bearer KEY (or Anthropic's x-api-key: KEY)")

// ErrBadKey is Authenticate's error for a key no tenant holds: a 401,
// code invalid_api_key.
var ErrBadKey = errors.New("invalid API key")

// Authenticate returns the tenant whose key is in the Authorization header
// ("Bearer KEY"): ErrNoKey for no key, ErrBadKey for an unknown key.
func (ts *Tenants) Authenticate(authorization string) (*Tenant, error) {
	if ts.anonymous != nil {
		return ts.anonymous, nil
	}
	key, ok := strings.CutPrefix(authorization, "Bearer ")
	key = strings.TrimSpace(key)
	if !ok || key == "" {
		return nil, ErrNoKey
	}
	sum := sha256.Sum256([]byte(key))
	// The lookup is keyed by the hash, not the key, so its timing reveals
	// nothing useful about the key.
	t, found := ts.byHash[sum]
	if !found {
		return nil, ErrBadKey
	}
	return t, nil
}

// Tenant returns the tenant named name, or nil.
func (ts *Tenants) Tenant(name string) *Tenant {
	if ts.anonymous != nil && ts.anonymous.Name == name {
		return ts.anonymous
	}
	return ts.byName[name]
}

// Len is the number of tenants.
func (ts *Tenants) Len() int { return len(ts.byName) }

// All returns every tenant.
func (ts *Tenants) All() []*Tenant {
	out := make([]*Tenant, 0, len(ts.byName))
	for _, t := range ts.byName {
		out = append(out, t)
	}
	return out
}

// MaxPluginBytes is the largest plugin any tenant may upload.
func (ts *Tenants) MaxPluginBytes() int {
	n := 0
	for _, t := range ts.byName {
		n = max(n, t.Limits.MaxPluginBytes)
	}
	return n
}
