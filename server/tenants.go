package server

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/realizar-host/realizar-host/host"
)

// ErrTenants is wrapped by every error reading a tenants file.
var ErrTenants = errors.New("server: invalid tenants file")

// Limits bound one tenant. Zero fields take DefaultLimits' values.
type Limits struct {
	// MaxPluginBytes is the largest module the tenant may upload, in bytes.
	MaxPluginBytes int `json:"max_plugin_bytes"`
	// MemoryPages caps each plugin instance's memory, in 64 KiB pages.
	MemoryPages uint32 `json:"memory_pages"`
	// StepDeadline bounds each call into a plugin (one decode step of one
	// policy), as a Go duration ("50ms").
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
}

// DefaultLimits are generous limits for a trusted deployment: 4 MiB
// plugins, 256 pages (16 MiB), 250 ms per step, 16 concurrent requests,
// 600 requests per minute.
func DefaultLimits() Limits {
	return Limits{MaxPluginBytes: 4 << 20, MemoryPages: 256, StepDeadline: Duration(host.DefaultCallTimeout),
		MaxConcurrent: 16, RequestsPerMinute: 600}
}

// or fills l's zero fields from d.
func (l Limits) or(d Limits) Limits {
	if l.MaxPluginBytes == 0 {
		l.MaxPluginBytes = d.MaxPluginBytes
	}
	if l.MemoryPages == 0 {
		l.MemoryPages = d.MemoryPages
	}
	if l.StepDeadline == 0 {
		l.StepDeadline = d.StepDeadline
	}
	if l.MaxConcurrent == 0 {
		l.MaxConcurrent = d.MaxConcurrent
	}
	if l.RequestsPerMinute == 0 {
		l.RequestsPerMinute = d.RequestsPerMinute
	}
	return l
}

func (l Limits) check() error {
	if l.MaxPluginBytes < 0 || l.StepDeadline < 0 || l.MaxConcurrent < 0 || l.RequestsPerMinute < 0 || l.MaxSequences < 0 || l.MemoryPages > 65536 {
		return fmt.Errorf("limits out of range: %+v", l)
	}
	return nil
}

// hostLimits are the per-instance limits a tenant's plugins run under.
func (l Limits) hostLimits() host.Limits {
	return host.Limits{MemoryPages: l.MemoryPages, CallTimeout: time.Duration(l.StepDeadline)}
}

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
	active  int // requests queued or running
}

// admit takes one of the tenant's concurrent slots and one request from its
// rate; the returned release gives the slot back. Refusals are 429s.
func (t *Tenant) admit(now time.Time) (release func(), err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.active >= t.Limits.MaxConcurrent {
		return nil, &APIError{Status: 429, Type: typeRateLimit, Code: "concurrency_limit_exceeded", RetryAfter: time.Second,
			Message: fmt.Sprintf("tenant %s has %d requests in flight, its limit", t.Name, t.Limits.MaxConcurrent)}
	}
	r := t.limiter.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return nil, &APIError{Status: 429, Type: typeRateLimit, Code: "rate_limit_exceeded", RetryAfter: d,
			Message: fmt.Sprintf("tenant %s is over %d requests per minute", t.Name, t.Limits.RequestsPerMinute)}
	}
	t.active++
	return func() {
		t.mu.Lock()
		t.active--
		t.mu.Unlock()
	}, nil
}

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
	defaults := f.Defaults.or(DefaultLimits())
	if err := defaults.check(); err != nil {
		return nil, fmt.Errorf("%w: defaults: %w", ErrTenants, err)
	}
	ts := &Tenants{byHash: map[[sha256.Size]byte]*Tenant{}, byName: map[string]*Tenant{}}
	for i, spec := range f.Tenants {
		if !tenantName.MatchString(spec.Name) {
			return nil, fmt.Errorf("%w: tenant %d: name %q is not 1 to 64 of [a-z0-9_-]", ErrTenants, i, spec.Name)
		}
		if _, dup := ts.byName[spec.Name]; dup {
			return nil, fmt.Errorf("%w: tenant %s appears twice", ErrTenants, spec.Name)
		}
		l := spec.Limits.or(defaults)
		if err := l.check(); err != nil {
			return nil, fmt.Errorf("%w: tenant %s: %w", ErrTenants, spec.Name, err)
		}
		if len(spec.KeySHA256) == 0 {
			return nil, fmt.Errorf("%w: tenant %s has no key_sha256", ErrTenants, spec.Name)
		}
		t := newTenant(spec.Name, l)
		ts.byName[t.Name] = t
		for _, h := range spec.KeySHA256 {
			raw, err := hex.DecodeString(strings.TrimSpace(h))
			if err != nil || len(raw) != sha256.Size {
				return nil, fmt.Errorf("%w: tenant %s: key_sha256 %q is not 64 hex digits", ErrTenants, spec.Name, h)
			}
			sum := [sha256.Size]byte(raw)
			if other, dup := ts.byHash[sum]; dup {
				return nil, fmt.Errorf("%w: tenants %s and %s share a key", ErrTenants, other.Name, spec.Name)
			}
			ts.byHash[sum] = t
		}
	}
	if len(ts.byName) == 0 {
		return nil, fmt.Errorf("%w: no tenants", ErrTenants)
	}
	return ts, nil
}

// HashKey returns the hex sha256 of an API key, as the tenants file stores it.
func HashKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// Authenticate returns the tenant whose key is in the Authorization header
// ("Bearer KEY"). No key or an unknown key is a 401.
func (ts *Tenants) Authenticate(authorization string) (*Tenant, error) {
	if ts.anonymous != nil {
		return ts.anonymous, nil
	}
	key, ok := strings.CutPrefix(authorization, "Bearer ")
	key = strings.TrimSpace(key)
	if !ok || key == "" {
		return nil, &APIError{Status: 401, Type: typeAuthentication, Code: "missing_api_key",
			Message: "no API key: send Authorization: Bearer KEY"}
	}
	sum := sha256.Sum256([]byte(key))
	// The lookup is keyed by the hash, not the key, so its timing reveals
	// nothing useful about the key.
	t, found := ts.byHash[sum]
	if !found {
		return nil, &APIError{Status: 401, Type: typeAuthentication, Code: "invalid_api_key",
			Message: "invalid API key"}
	}
	return t, nil
}

// tenant returns the tenant named name, or nil.
func (ts *Tenants) tenant(name string) *Tenant {
	if ts.anonymous != nil && ts.anonymous.Name == name {
		return ts.anonymous
	}
	return ts.byName[name]
}

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
