package tenancy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/abi/wasmfile"
)

// ErrNoPlugin is returned by a Store for a plugin the tenant does not hold
// (whether or not another tenant holds it).
var ErrNoPlugin = errors.New("tenancy: no such plugin")

// ErrUnavailable is wrapped by a Store's error when the service behind it
// (a database) cannot be reached. The server answers it with a 503, code
// store_unavailable, Retry-After 1 s; what the server has cached goes on
// being served.
var ErrUnavailable = errors.New("tenancy: store unavailable")

// Store keeps tenants' plugin modules, content-addressed by hex sha256, one
// namespace per tenant. A directory (DirStore) is the default; a shared
// store (a database) can replace it.
//
// Implementations are safe for concurrent use. tenant is a valid tenant
// name and sum 64 lowercase hex digits; the caller checks both. An error
// wrapping ErrUnavailable means the service behind the store cannot be
// reached (a 503).
type Store interface {
	// Put stores wasm under its sha256 in tenant's namespace (idempotent).
	// Storing a module the tenant does not hold yet is ErrQuota when it
	// would take the tenant over q; storing one it holds is always fine.
	Put(ctx context.Context, tenant, sum string, wasm []byte, q Quota) error
	// Get returns the module; ErrNoPlugin when tenant has none with sum.
	Get(ctx context.Context, tenant, sum string) ([]byte, error)
	// List returns tenant's modules, sorted by sha256.
	List(ctx context.Context, tenant string) ([]PluginInfo, error)
	// Delete removes a module; ErrNoPlugin when tenant has none with sum.
	Delete(ctx context.Context, tenant, sum string) error
}

// PluginInfo describes a stored module.
type PluginInfo struct {
	// SHA256 is the module's hex sha256, its id.
	SHA256 string
	// Bytes is the module's size in bytes.
	Bytes int
	// Meta is the module's metadata section (abi.MetaSection) when the
	// store keeps it; the zero Meta (Name "") when it does not, and the
	// server then reads the section from the module, without compiling it.
	Meta wasmfile.Meta
}

// ModuleMeta reads a module's metadata section (abi.MetaSection) without
// compiling or validating the rest of it. Errors: a module wasmfile cannot
// parse, no section, a malformed one.
func ModuleMeta(wasm []byte) (wasmfile.Meta, error) {
	mod, err := wasmfile.Parse(wasm)
	if err != nil {
		return wasmfile.Meta{}, err
	}
	payload, ok := mod.CustomSection(abi.MetaSection)
	if !ok {
		return wasmfile.Meta{}, fmt.Errorf("no %s section", abi.MetaSection)
	}
	return wasmfile.UnmarshalMeta(payload)
}

// Quota bounds what one tenant stores. A zero field is no bound.
type Quota struct {
	// Plugins is the most modules the tenant may hold.
	Plugins int
	// Bytes is the most bytes the tenant's modules may take together.
	Bytes int64
}

// ErrQuota is returned by Store.Put when a new module would take the
// tenant over its quota: a 429, code quota_exceeded.
var ErrQuota = errors.New("tenancy: plugin quota exceeded")

// CheckQuota reports ErrQuota when a module of n bytes, not yet held,
// would take the tenant holding held over q: the rule every Store applies.
func CheckQuota(held []PluginInfo, n int, q Quota) error {
	total := int64(n)
	for _, p := range held {
		total += int64(p.Bytes)
	}
	switch {
	case q.Plugins > 0 && len(held)+1 > q.Plugins:
		return fmt.Errorf("%w: %d plugins, the most the tenant may hold", ErrQuota, q.Plugins)
	case q.Bytes > 0 && total > q.Bytes:
		return fmt.Errorf("%w: %d bytes with this one, over the tenant's %d", ErrQuota, total, q.Bytes)
	}
	return nil
}

var hexSum = regexp.MustCompile(`^[0-9a-f]{64}$`)

// ValidSum reports whether s is a lowercase hex sha256: 64 of [0-9a-f],
// a plugin's id in a Store.
func ValidSum(s string) bool { return hexSum.MatchString(s) }

// SumOf is the hex sha256 of b: a module's id in a Store.
func SumOf(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// DirStore is a Store in a directory: DIR/<tenant>/<sha256>.wasm. Files
// are written to a temporary name and renamed, so a crash leaves no
// partial module under a valid name.
type DirStore struct {
	dir string
	mu  sync.Mutex // serializes Put's quota check and write
}

// NewDirStore returns a DirStore rooted at dir, creating it (mode 0700).
func NewDirStore(dir string) (*DirStore, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("tenancy: plugin dir: %w", err)
	}
	return &DirStore{dir: dir}, nil
}

// Dir is the directory d is rooted at.
func (d *DirStore) Dir() string { return d.dir }

func (d *DirStore) path(tenant, sum string) string {
	return filepath.Join(d.dir, tenant, sum+".wasm")
}

// Put implements Store.
func (d *DirStore) Put(ctx context.Context, tenant, sum string, wasm []byte, q Quota) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	dir := filepath.Join(d.dir, tenant)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if _, err := os.Stat(d.path(tenant, sum)); err == nil {
		return nil
	}
	held, err := d.List(ctx, tenant)
	if err != nil {
		return err
	}
	if err := CheckQuota(held, len(wasm), q); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".upload-*")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(wasm)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		_ = os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), d.path(tenant, sum))
}

// Get implements Store.
func (d *DirStore) Get(_ context.Context, tenant, sum string) ([]byte, error) {
	b, err := os.ReadFile(d.path(tenant, sum))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s", ErrNoPlugin, sum)
	}
	return b, err
}

// List implements Store.
func (d *DirStore) List(_ context.Context, tenant string) ([]PluginInfo, error) {
	entries, err := os.ReadDir(filepath.Join(d.dir, tenant))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []PluginInfo
	for _, e := range entries {
		if s, ok := strings.CutSuffix(e.Name(), ".wasm"); ok && ValidSum(s) {
			info, err := e.Info()
			if err != nil {
				continue // deleted meanwhile
			}
			out = append(out, PluginInfo{SHA256: s, Bytes: int(info.Size())})
		}
	}
	slices.SortFunc(out, func(a, b PluginInfo) int { return strings.Compare(a.SHA256, b.SHA256) })
	return out, nil
}

// Delete implements Store.
func (d *DirStore) Delete(_ context.Context, tenant, sum string) error {
	err := os.Remove(d.path(tenant, sum))
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: %s", ErrNoPlugin, sum)
	}
	return err
}

// MemStore is a Store in memory, for tests and for a server without a
// --plugin-dir (uploads then last until exit).
type MemStore struct {
	mu   sync.Mutex
	data map[string]map[string][]byte
}

// NewMemStore returns an empty MemStore.
func NewMemStore() *MemStore {
	return &MemStore{data: map[string]map[string][]byte{}}
}

// Put implements Store.
func (m *MemStore) Put(_ context.Context, tenant, sum string, wasm []byte, q Quota) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.data[tenant][sum]; ok {
		return nil
	}
	if err := CheckQuota(m.list(tenant), len(wasm), q); err != nil {
		return err
	}
	if m.data[tenant] == nil {
		m.data[tenant] = map[string][]byte{}
	}
	m.data[tenant][sum] = slices.Clone(wasm)
	return nil
}

// Get implements Store.
func (m *MemStore) Get(_ context.Context, tenant, sum string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.data[tenant][sum]
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrNoPlugin, sum)
	}
	return slices.Clone(b), nil
}

// List implements Store.
func (m *MemStore) List(_ context.Context, tenant string) ([]PluginInfo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.list(tenant), nil
}

func (m *MemStore) list(tenant string) []PluginInfo {
	var out []PluginInfo
	for s, b := range m.data[tenant] {
		out = append(out, PluginInfo{SHA256: s, Bytes: len(b)})
	}
	slices.SortFunc(out, func(a, b PluginInfo) int { return strings.Compare(a.SHA256, b.SHA256) })
	return out
}

// Delete implements Store.
func (m *MemStore) Delete(_ context.Context, tenant, sum string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.data[tenant][sum]; !ok {
		return fmt.Errorf("%w: %s", ErrNoPlugin, sum)
	}
	delete(m.data[tenant], sum)
	return nil
}
