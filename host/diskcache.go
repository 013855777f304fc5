package host

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"

	"github.com/realizar-host/realizar-host/abi/wasmfile"
	"github.com/realizar-host/realizar-host/internal/lru"
)

// diskCache bounds and releases wazero's on-disk compilation cache
// (Config.WithCompilationCacheDir): an LRU of its files charged their
// sizes, whose dropped and released files are deleted.
//
// wazero (v1.12) keeps one file per compiled module in a folder
// "wazero-<version>-<GOARCH>-<GOOS>" of the cache dir, named by the hex
// sha256 of: the module's ID (the sha256 of its bytes followed by one
// byte, 1 when the runtime ensures termination, as this Host's does),
// the six bytes "WAZEVO", and its CPU feature flags as 8 little-endian
// bytes. Those flags are not exported, so newDiskCache finds them, with
// the folder, from the file a probe module leaves: a wazero that lays
// its cache out otherwise fails the probe, and New with it, rather than
// leave the folder unbounded.
type diskCache struct {
	dir    string   // the version folder
	suffix [14]byte // "WAZEVO" and the CPU flags
	term   byte     // the ID's termination byte

	mu     sync.Mutex
	files  *lru.Cache[string, diskEntry] // file name -> what it holds
	byKey  map[cacheKey]string           // module -> its file, when known
	remove []string                      // dropped by the LRU, to delete
}

// diskEntry is one file's module, when this process has loaded it.
type diskEntry struct {
	key   cacheKey
	known bool
}

// diskProbe is the probe module: one empty function and a custom section
// that makes its bytes this package's own.
var diskProbe = func() []byte {
	m := append([]byte(nil), wasmfile.Magic...)
	m = append(m, 1, 4, 1, 0x60, 0, 0, 3, 2, 1, 0, 10, 4, 1, 2, 0, 0x0B)
	out, _ := wasmfile.SetCustomSection(m, "realizar.cache-probe", []byte("1"))
	return out
}()

// newDiskCache compiles the probe through rt, whose compilation cache is
// in root, finds its file, and charges the folder's files (oldest first,
// by modification time) to an LRU of budget bytes (<= 0: no bound).
func newDiskCache(ctx context.Context, rt wazero.Runtime, root string, budget int64) (*diskCache, error) {
	c, err := rt.CompileModule(ctx, diskProbe)
	if err != nil {
		return nil, fmt.Errorf("host: compilation cache %s: probe: %w", root, err)
	}
	_ = c.Close(ctx)
	d := &diskCache{byKey: map[cacheKey]string{}}
	if !d.find(root) {
		return nil, fmt.Errorf("host: compilation cache %s: no file of the probe module where wazero %s would write it", root, wazeroVersion)
	}
	d.files = lru.New(budget, func(name string, e diskEntry) {
		d.remove = append(d.remove, name)
		if e.known {
			delete(d.byKey, e.key)
		}
	})
	d.scan()
	return d, nil
}

// wazeroVersion is the layout newDiskCache knows, for its error.
const wazeroVersion = "v1.12"

// find looks for the probe's file among the candidates: every wazero
// folder of root, both termination bytes and every flag value below 256
// (wazero defines three flags).
func (d *diskCache) find(root string) bool {
	dirs, _ := filepath.Glob(filepath.Join(root, "wazero-*"))
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		names := map[string]bool{}
		for _, e := range entries {
			names[e.Name()] = true
		}
		for _, term := range []byte{1, 0} {
			for flags := range uint64(256) {
				d.dir, d.term = dir, term
				copy(d.suffix[:], "WAZEVO")
				binary.LittleEndian.PutUint64(d.suffix[6:], flags)
				if names[d.name(diskProbe)] {
					return true
				}
			}
		}
	}
	return false
}

// name is the file wazero writes for wasm.
func (d *diskCache) name(wasm []byte) string {
	h := sha256.New()
	h.Write(wasm)
	h.Write([]byte{d.term})
	var id [sha256.Size]byte
	h.Sum(id[:0])
	h.Reset()
	h.Write(id[:])
	h.Write(d.suffix[:])
	return hex.EncodeToString(h.Sum(nil))
}

// scan charges the folder's files, oldest first.
func (d *diskCache) scan() {
	entries, err := os.ReadDir(d.dir)
	if err != nil {
		return
	}
	type file struct {
		name string
		size int64
		mod  time.Time
	}
	var files []file
	for _, e := range entries {
		if !isCacheFile(e.Name()) {
			continue
		}
		if info, err := e.Info(); err == nil && info.Mode().IsRegular() {
			files = append(files, file{e.Name(), info.Size(), info.ModTime()})
		}
	}
	slices.SortFunc(files, func(a, b file) int { return a.mod.Compare(b.mod) })
	d.mu.Lock()
	for _, f := range files {
		d.files.Add(f.name, diskEntry{}, f.size)
	}
	d.mu.Unlock()
	d.flush()
}

// isCacheFile says whether name is a finished cache file (64 hex digits;
// wazero writes "<name>.<random>.tmp" first).
func isCacheFile(name string) bool {
	if len(name) != 2*sha256.Size {
		return false
	}
	_, err := hex.DecodeString(name)
	return err == nil && strings.ToLower(name) == name
}

// used records that key's module, compiled from wasm, was just compiled or
// read from its file: the file is charged as the most recently used (and
// its modification time set to now, so the order outlives the process),
// dropping the least recently used past the budget. It returns the file's
// name ("" if wazero left none).
func (d *diskCache) used(key cacheKey, wasm []byte) string {
	name := d.name(wasm)
	path := filepath.Join(d.dir, name)
	info, err := os.Stat(path)
	if err != nil {
		return ""
	}
	now := time.Now()
	_ = os.Chtimes(path, now, now)
	d.mu.Lock()
	d.files.Add(name, diskEntry{key: key, known: true}, info.Size())
	if _, ok := d.files.Get(name); ok {
		d.byKey[key] = name
	}
	d.mu.Unlock()
	d.flush()
	return name
}

// release deletes the file of key's module: the one wasm names when wasm
// is given (a module an earlier process compiled), else the one this
// process has seen. It reports whether a file was deleted.
func (d *diskCache) release(key cacheKey, wasm []byte) bool {
	d.mu.Lock()
	name, ok := d.byKey[key]
	if wasm != nil {
		name, ok = d.name(wasm), true
	}
	if ok {
		delete(d.byKey, key)
		d.files.Remove(name)
	}
	d.mu.Unlock()
	if !ok {
		return false
	}
	err := os.Remove(filepath.Join(d.dir, name))
	return err == nil
}

// flush deletes the files the LRU dropped.
func (d *diskCache) flush() {
	d.mu.Lock()
	names := d.remove
	d.remove = nil
	d.mu.Unlock()
	for _, n := range names {
		_ = os.Remove(filepath.Join(d.dir, n)) // gone meanwhile (another process's LRU): fine
	}
}

// usage is the number of files charged and their bytes.
func (d *diskCache) usage() (files int, bytes int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.files.Len(), d.files.Bytes()
}
