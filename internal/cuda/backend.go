//go:build cuda || cudaemu

package cuda

import (
	"math"
	"unsafe"
)

// dptr is a device address (CUdeviceptr in a `cuda` build, a host address
// under the emulator of a `cudaemu` build).
type dptr uintptr

// backend is what the forward needs of a device: memory, copies on the one
// stream, kernel launches by name. device (gorgonia.org/cu) implements it
// in a `cuda` build; the host kernel emulator in a `cudaemu` build (tests).
type backend interface {
	name() string
	// describe is what opening the device found and loaded, one line
	// each (driver, device, kernel JIT), for logs.
	describe() []string
	alloc(n int64, what string) (dptr, error)
	free(p *dptr)
	// htod, dtoh and dtod queue copies on the stream; htod may return
	// before the copy lands, but src may be reused at once; dtoh's data is
	// valid after sync.
	htod(dst dptr, src unsafe.Pointer, n int64) error
	dtoh(dst unsafe.Pointer, src dptr, n int64) error
	dtod(dst, src dptr, n int64) error
	// launch queues kernel name with grid (gx, gy) and block (bx, by).
	launch(name string, gx, gy, bx, by int, args ...arg) error
	// sync waits for everything queued; it reports a failed kernel.
	sync() error
	// capture runs fn, which may only queue launches, recording them as a
	// graph instead of running them (a CUDA graph: cuStreamBeginCapture
	// .. cuGraphInstantiate). runGraph queues the recorded launches again
	// with the same arguments, in one call; freeGraph releases the graph.
	// An error from capture leaves nothing queued and the stream usable.
	capture(fn func() error) (graph, error)
	runGraph(g graph) error
	freeGraph(g graph)
	// enter makes the device current on this goroutine's OS thread; the
	// returned func undoes it. Every method enters by itself; enter only
	// spares the repeated context switch around a run of calls.
	enter() func()
	close()
}

// graph is a recorded run of launches (a CUgraphExec in a `cuda` build,
// the emulator's recording otherwise); 0 is none.
type graph uintptr

// arg is one kernel parameter slot: every parameter travels as a uint64
// (pointers and 64-bit integers whole, 32-bit floats in the low half), as
// gorgonia.org/cu copies 8 bytes per parameter.
type arg = uint64

func ptr(p dptr) arg    { return arg(p) }
func i64(n int) arg     { return arg(int64(n)) }
func f32(x float32) arg { return arg(math.Float32bits(x)) }

func ceilDiv(a, b int) int { return (a + b - 1) / b }
