package ref

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/hybridgroup/yzma/pkg/llama"
	"github.com/jupiterrider/ffi"
)

// ErrOtherDir reports an [Open] of a second reference folder in one process:
// llama.cpp's libraries are process-wide, so only the first folder is used.
var ErrOtherDir = errors.New("llama.cpp reference already loaded from another folder")

// ErrLoad reports that the reference libraries could not be loaded or bound.
var ErrLoad = errors.New("cannot load the llama.cpp reference libraries")

// Lib is the loaded llama.cpp reference. Its methods are safe for concurrent
// use, except where a method says otherwise.
type Lib struct {
	dir  string // reference folder (holds lib/, vocab/)
	ggml *ggmlFuncs
	cpu  *cpuFuncs // nil when no CPU backend library was found mapped
}

var (
	openMu  sync.Mutex
	openLib *Lib
)

// Open loads the reference libraries from dir/lib (dir as returned by [Dir]),
// loads ggml's backends from that folder (ggml_backend_load_all_from_path) and
// silences llama.cpp's log. The first successful call loads; later calls with
// the same dir return the same *Lib, and with another dir an error wrapping
// [ErrOtherDir]. Failures wrap [ErrNotInstalled] (files absent) or [ErrLoad].
func Open(dir string) (*Lib, error) {
	openMu.Lock()
	defer openMu.Unlock()
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrLoad, err)
	}
	if openLib != nil {
		if openLib.dir != abs {
			return nil, fmt.Errorf("%w: loaded %s, asked for %s", ErrOtherDir, openLib.dir, abs)
		}
		return openLib, nil
	}
	libDir := filepath.Join(abs, "lib")
	if _, err := os.Stat(filepath.Join(libDir, "libllama.so")); err != nil {
		return nil, fmt.Errorf("%w: no %s (run tools/llamaref/install.sh)", ErrNotInstalled,
			filepath.Join(libDir, "libllama.so"))
	}
	if err := llama.Load(libDir); err != nil {
		return nil, fmt.Errorf("%w from %s: %v", ErrLoad, libDir, err)
	}
	llama.LogSet(llama.LogSilent())
	llama.BackendInit()
	if err := llama.GGMLBackendLoadAllFromPath(libDir); err != nil {
		return nil, fmt.Errorf("%w: backends from %s: %v", ErrLoad, libDir, err)
	}
	base, err := ffi.Load(filepath.Join(libDir, "libggml-base.so"))
	if err != nil {
		return nil, fmt.Errorf("%w: libggml-base: %v", ErrLoad, err)
	}
	g, err := bindGGML(base)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrLoad, err)
	}
	l := &Lib{dir: abs, ggml: g}
	if path := mappedCPUBackend(); path != "" {
		if c, err := bindCPU(path); err == nil {
			l.cpu = c
		}
	}
	openLib = l
	return l, nil
}

// OpenDefault is [Open] of [Dir].
func OpenDefault() (*Lib, error) {
	dir, err := Dir()
	if err != nil {
		return nil, err
	}
	return Open(dir)
}

// Dir is the reference folder the libraries were loaded from.
func (l *Lib) Dir() string { return l.dir }

// CPUBackend is the file name of the CPU backend variant ggml chose for this
// machine (for example "libggml-cpu-haswell.so"), or "" when none was found.
func (l *Lib) CPUBackend() string {
	if l.cpu == nil {
		return ""
	}
	return filepath.Base(l.cpu.path)
}

// mappedCPUBackend returns the path of the libggml-cpu-*.so that
// ggml_backend_load_all_from_path mapped into this process, read from
// /proc/self/maps, or "" when none is mapped.
func mappedCPUBackend() string {
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return ""
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) < 6 {
			continue
		}
		path := fields[len(fields)-1]
		if strings.HasPrefix(filepath.Base(path), "libggml-cpu") && strings.HasSuffix(path, ".so") {
			return path
		}
	}
	return ""
}
