//go:build cuda

package cuda

/*
#cgo LDFLAGS: -lcuda
#include <cuda.h>

// rh_graph_begin starts capturing stream s (this thread's launches only).
static CUresult rh_graph_begin(CUstream s) {
	return cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
}

// rh_graph_end ends the capture of s and instantiates what it recorded;
// the graph itself is destroyed, the executable one kept in *exec.
static CUresult rh_graph_end(CUstream s, CUgraphExec *exec, int keep) {
	CUgraph g = NULL;
	CUresult r = cuStreamEndCapture(s, &g);
	if (r != CUDA_SUCCESS || !keep) {
		if (g) cuGraphDestroy(g);
		return r;
	}
	r = cuGraphInstantiateWithFlags(exec, g, 0);
	cuGraphDestroy(g);
	return r;
}
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// The CUDA graph calls gorgonia.org/cu v0.9.6 lacks (it has graph
// construction but no stream capture, instantiation or launch): small
// bindings of the driver API, on the device's one stream.

// cuGraphExec is an executable graph (CUgraphExec).
type cuGraphExec = C.CUgraphExec

// cuStream is d's stream as this package's C type.
func (d *device) cuStream() C.CUstream { return C.CUstream(unsafe.Pointer(d.stream.C())) }

// graphError names a failed graph call with the driver's result code.
func graphError(call string, r C.CUresult) error {
	var msg *C.char
	C.cuGetErrorString(r, &msg)
	text := "unknown error"
	if msg != nil {
		text = C.GoString(msg)
	}
	return fmt.Errorf("cuda: %s: %s (CUresult %d)", call, text, int(r))
}

// capture records the launches fn queues on the stream as an executable
// graph (stream capture, then cuGraphInstantiateWithFlags). On any error
// the capture is ended and discarded, so nothing stays queued.
func (d *device) capture(fn func() error) (graph, error) {
	defer d.enter()()
	s := d.cuStream()
	if r := C.rh_graph_begin(s); r != C.CUDA_SUCCESS {
		return 0, graphError("cuStreamBeginCapture", r)
	}
	ferr := fn()
	var exec C.CUgraphExec
	keep := C.int(1)
	if ferr != nil {
		keep = 0
	}
	r := C.rh_graph_end(s, &exec, keep)
	switch {
	case ferr != nil:
		return 0, ferr
	case r != C.CUDA_SUCCESS:
		return 0, graphError("cuStreamEndCapture/cuGraphInstantiateWithFlags", r)
	}
	d.graphs = append(d.graphs, exec)
	return graph(len(d.graphs)), nil
}

// graphExec is graph g's executable graph, or nil.
func (d *device) graphExec(g graph) C.CUgraphExec {
	if g == 0 || int(g) > len(d.graphs) {
		return nil
	}
	return d.graphs[g-1]
}

// runGraph queues the graph's launches on the stream (cuGraphLaunch).
func (d *device) runGraph(g graph) error {
	defer d.enter()()
	exec := d.graphExec(g)
	if exec == nil {
		return fmt.Errorf("cuda: no graph %d", g)
	}
	if r := C.cuGraphLaunch(exec, d.cuStream()); r != C.CUDA_SUCCESS {
		return graphError("cuGraphLaunch", r)
	}
	return nil
}

// freeGraph destroys an executable graph (after the stream is done with
// it: cuGraphExecDestroy may be called while a launch is pending, the
// driver defers the release).
func (d *device) freeGraph(g graph) {
	if exec := d.graphExec(g); exec != nil {
		defer d.enter()()
		C.cuGraphExecDestroy(exec)
		d.graphs[g-1] = nil
	}
}

// freeGraphs destroys every graph still held (close).
func (d *device) freeGraphs() {
	for i, exec := range d.graphs {
		if exec != nil {
			C.cuGraphExecDestroy(exec)
			d.graphs[i] = nil
		}
	}
}
