package cuda

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// verdictKey identifies what a parity verdict was reached for.
type verdictKey struct {
	fileSHA256 string // hex sha256 of the GGUF file
	device     string // the driver's device name, e.g. "NVIDIA H200"
	kernelHash string // kernelHash() of the build
}

// String is the key as stored: the three parts joined by "|".
func (k verdictKey) String() string { return k.fileSHA256 + "|" + k.device + "|" + k.kernelHash }

// valid reports whether every part is set (an empty part is never cached).
func (k verdictKey) valid() bool { return k.fileSHA256 != "" && k.device != "" && k.kernelHash != "" }

// VerdictCache remembers parity verdicts in a JSON file, so that a model
// already judged on a device with the same kernels loads without the
// probe. It is safe for concurrent use within a process; concurrent
// processes may lose each other's entries (the gate then runs again).
type VerdictCache struct {
	path string // "" keeps the verdicts in memory only
	mu   sync.Mutex
	m    map[string]Verdict
}

// OpenVerdictCache reads the cache file at path (a missing file is an
// empty cache). path "" makes an in-memory cache.
//
// Errors: the file exists but cannot be read or is not a verdict cache.
func OpenVerdictCache(path string) (*VerdictCache, error) {
	c := &VerdictCache{path: path, m: map[string]Verdict{}}
	if path == "" {
		return c, nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cuda: verdict cache: %w", err)
	}
	if err := json.Unmarshal(b, &c.m); err != nil {
		return nil, fmt.Errorf("cuda: verdict cache %s: %w", path, err)
	}
	return c, nil
}

// get returns the cached verdict for k; ok is false when there is none or a
// part of k is empty.
func (c *VerdictCache) get(k verdictKey) (v Verdict, ok bool) {
	if !k.valid() {
		return Verdict{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok = c.m[k.String()]
	return v, ok
}

// put records v for k (nothing for a key with an empty part) and rewrites
// the file (through a temporary file and a rename).
func (c *VerdictCache) put(k verdictKey, v Verdict) error {
	if !k.valid() {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[k.String()] = v
	if c.path == "" {
		return nil
	}
	b, err := json.MarshalIndent(c.m, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(c.path), 0o755); err != nil {
		return fmt.Errorf("cuda: verdict cache: %w", err)
	}
	tmp := c.path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("cuda: verdict cache: %w", err)
	}
	if err := os.Rename(tmp, c.path); err != nil {
		return fmt.Errorf("cuda: verdict cache: %w", err)
	}
	return nil
}

// FileSHA256 is the hex sha256 of the file at path (for verdictKey).
func FileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("cuda: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("cuda: hash %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
