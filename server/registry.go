package server

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
)

// ErrNoPlugin is returned by a Store for a plugin the tenant does not hold
// (whether or not another tenant holds it).
var ErrNoPlugin = errors.New("server: no such plugin")

// Store keeps tenants' plugin modules, content-addressed by hex sha256, one
// namespace per tenant. A directory (DirStore) is the first; a shared store
// (object storage, a database) can replace it.
//
// Implementations are safe for concurrent use. tenant is a valid tenant
// name and sum 64 lowercase hex digits; the caller checks both.
type Store interface {
	// Put stores wasm under its sha256 in tenant's namespace (idempotent).
	Put(ctx context.Context, tenant, sum string, wasm []byte) error
	// Get returns the module; ErrNoPlugin when tenant has none with sum.
	Get(ctx context.Context, tenant, sum string) ([]byte, error)
	// List returns the sums of tenant's modules, sorted.
	List(ctx context.Context, tenant string) ([]string, error)
	// Delete removes a module; ErrNoPlugin when tenant has none with sum.
	Delete(ctx context.Context, tenant, sum string) error
}

var hexSum = regexp.MustCompile(`^[0-9a-f]{64}$`)

// isSum reports whether s is a lowercase hex sha256.
func isSum(s string) bool { return hexSum.MatchString(s) }

// sumOf is the hex sha256 of b.
func sumOf(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// DirStore is a Store in a directory: DIR/<tenant>/<sha256>.wasm. Files
// are written to a temporary name and renamed, so a crash leaves no
// partial module under a valid name.
type DirStore struct {
	dir string
}

// NewDirStore returns a DirStore rooted at dir, creating it (mode 0700).
func NewDirStore(dir string) (*DirStore, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("server: plugin dir: %w", err)
	}
	return &DirStore{dir: dir}, nil
}

func (d *DirStore) path(tenant, sum string) string {
	return filepath.Join(d.dir, tenant, sum+".wasm")
}

// Put implements Store.
func (d *DirStore) Put(_ context.Context, tenant, sum string, wasm []byte) error {
	dir := filepath.Join(d.dir, tenant)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if _, err := os.Stat(d.path(tenant, sum)); err == nil {
		return nil
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
func (d *DirStore) List(_ context.Context, tenant string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(d.dir, tenant))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var sums []string
	for _, e := range entries {
		if s, ok := strings.CutSuffix(e.Name(), ".wasm"); ok && isSum(s) {
			sums = append(sums, s)
		}
	}
	slices.Sort(sums)
	return sums, nil
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
func (m *MemStore) Put(_ context.Context, tenant, sum string, wasm []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
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
func (m *MemStore) List(_ context.Context, tenant string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var sums []string
	for s := range m.data[tenant] {
		sums = append(sums, s)
	}
	slices.Sort(sums)
	return sums, nil
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
