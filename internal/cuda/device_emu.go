//go:build cudaemu && !cuda

package cuda

/*
#cgo CXXFLAGS: -std=c++17 -O2 -Wall
#cgo LDFLAGS: -lstdc++ -lm
#include <stdint.h>
#include <stdlib.h>
uint64_t emu_alloc(uint64_t n);
void emu_free(uint64_t p);
void emu_htod(uint64_t dst, const void *src, uint64_t n);
void emu_dtoh(void *dst, uint64_t src, uint64_t n);
void emu_dtod(uint64_t dst, uint64_t src, uint64_t n);
int emu_launch_by_name(const char *name, int gx, int gy, int bx, int by, const uint64_t *args);
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// emuDevice is the backend of a `cudaemu` build (tests only): the kernels
// of kernels/*.cu compiled as host C++ and run on the fiber emulator of
// testdata/emu, over host memory. Launches run to completion; there is
// one emulated device, ordinal 0. A graph is a recording of launches
// (name, shape, argument slots), replayed in order.
type emuDevice struct {
	recording *[]emuLaunch  // set while capture runs
	graphs    [][]emuLaunch // graph g is graphs[g-1]; nil once freed
	replays   int           // runGraph calls, for tests
}

// emuLaunch is one recorded launch.
type emuLaunch struct {
	name           string
	gx, gy, bx, by int
	args           []arg
}

// Available reports whether ordinal is the emulator's one device, 0; the
// error wraps ErrUnavailable otherwise.
func Available(ordinal int) error {
	if ordinal != 0 {
		return fmt.Errorf("%w: the emulator has device 0 only, %d requested", ErrUnavailable, ordinal)
	}
	return nil
}

func openBackend(ordinal int, _ bool) (backend, error) {
	if err := Available(ordinal); err != nil {
		return nil, err
	}
	return &emuDevice{}, nil
}

func (*emuDevice) name() string { return "host emulator" }

func (*emuDevice) describe() []string {
	return []string{"host emulator: the kernels of kernels/*.cu as host C++ on testdata/emu"}
}

func (*emuDevice) alloc(n int64, what string) (dptr, error) {
	p := C.emu_alloc(C.uint64_t(max(n, 1)))
	if p == 0 {
		return 0, fmt.Errorf("cuda: emulator: allocate %d bytes for %s", n, what)
	}
	return dptr(p), nil
}

func (*emuDevice) free(p *dptr) {
	if *p != 0 {
		C.emu_free(C.uint64_t(*p))
		*p = 0
	}
}

func (*emuDevice) htod(dst dptr, src unsafe.Pointer, n int64) error {
	C.emu_htod(C.uint64_t(dst), src, C.uint64_t(n))
	return nil
}

func (*emuDevice) dtoh(dst unsafe.Pointer, src dptr, n int64) error {
	C.emu_dtoh(dst, C.uint64_t(src), C.uint64_t(n))
	return nil
}

func (*emuDevice) dtod(dst, src dptr, n int64) error {
	C.emu_dtod(C.uint64_t(dst), C.uint64_t(src), C.uint64_t(n))
	return nil
}

func (e *emuDevice) launch(name string, gx, gy, bx, by int, args ...arg) error {
	if e.recording != nil {
		*e.recording = append(*e.recording, emuLaunch{name, gx, gy, bx, by, append([]arg(nil), args...)})
		return nil
	}
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	a := append([]arg(nil), args...)
	a = append(a, 0) // never empty
	if C.emu_launch_by_name(cname, C.int(gx), C.int(gy), C.int(bx), C.int(by), (*C.uint64_t)(unsafe.Pointer(&a[0]))) != 0 {
		return fmt.Errorf("cuda: emulator has no kernel %q", name)
	}
	return nil
}

func (e *emuDevice) capture(fn func() error) (graph, error) {
	var rec []emuLaunch
	e.recording = &rec
	err := fn()
	e.recording = nil
	if err != nil {
		return 0, err
	}
	e.graphs = append(e.graphs, rec)
	return graph(len(e.graphs)), nil
}

func (e *emuDevice) runGraph(g graph) error {
	if g == 0 || int(g) > len(e.graphs) || e.graphs[g-1] == nil {
		return fmt.Errorf("cuda: emulator: no graph %d", g)
	}
	e.replays++
	for _, l := range e.graphs[g-1] {
		if err := e.launch(l.name, l.gx, l.gy, l.bx, l.by, l.args...); err != nil {
			return err
		}
	}
	return nil
}

func (e *emuDevice) freeGraph(g graph) {
	if g != 0 && int(g) <= len(e.graphs) {
		e.graphs[g-1] = nil
	}
}

func (*emuDevice) sync() error   { return nil }
func (*emuDevice) enter() func() { return func() {} }
func (*emuDevice) close()        {}

// emulated reports that kernels run on the host emulator (shorter probes in tests).
const emulated = true
