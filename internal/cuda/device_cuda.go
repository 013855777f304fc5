//go:build cuda

package cuda

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"time"
	"unsafe"

	"gorgonia.org/cu"
)

// device is the backend of a `cuda` build: one GPU's primary context, the
// JIT-compiled kernel modules and the stream every launch goes on.
//
// # Threads
//
// A CUDA context is current per OS thread, and goroutines move between
// threads (t.Run, for one, starts a new goroutine). So every method pins
// its goroutine to its thread and makes the context current there for the
// duration of its driver calls (enter); no caller has to.
type device struct {
	dev      cu.Device
	ctx      cu.CUContext
	retained bool
	devName  string
	arch     int
	stream   cu.Stream
	mods     []cu.Module
	fns      map[string]cu.Function
	info     []string      // what open found and loaded (describe)
	syncEach bool          // synchronize after every launch (Options.SyncEachLaunch)
	graphs   []cuGraphExec // graph g is graphs[g-1] (graph_cuda.go); nil once freed
}

// Available reports whether a GPU usable by this package (compute
// capability 8.0 or later) is at ordinal device; the error wraps
// ErrUnavailable otherwise.
func Available(device int) error {
	_, _, err := probeDevice(device)
	return err
}

// probeDevice finds the device and the PTX arch for it.
func probeDevice(ordinal int) (cu.Device, int, error) {
	n, err := cu.NumDevices()
	if err != nil {
		return 0, 0, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	if ordinal < 0 || ordinal >= n {
		return 0, 0, fmt.Errorf("%w: device %d requested, %d present", ErrUnavailable, ordinal, n)
	}
	dev, err := cu.GetDevice(ordinal)
	if err != nil {
		return 0, 0, fmt.Errorf("%w: device %d: %v", ErrUnavailable, ordinal, err)
	}
	major, err1 := dev.Attribute(cu.ComputeCapabilityMajor)
	minor, err2 := dev.Attribute(cu.ComputeCapabilityMinor)
	if err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("%w: device %d: compute capability unknown", ErrUnavailable, ordinal)
	}
	arch, ok := ptxArch(major, minor)
	if !ok {
		return 0, 0, fmt.Errorf("%w: device %d has compute capability %d.%d, the kernels need 8.0 or later", ErrUnavailable, ordinal, major, minor)
	}
	return dev, arch, nil
}

// openBackend opens the GPU at ordinal: retains its primary context,
// JIT-compiles every kernel family, resolves every kernel the forward
// launches and makes the stream. syncEach makes every launch wait for its
// kernel (Options.SyncEachLaunch).
func openBackend(ordinal int, syncEach bool) (backend, error) {
	dev, arch, err := probeDevice(ordinal)
	if err != nil {
		return nil, err
	}
	d := &device{dev: dev, arch: arch, fns: map[string]cu.Function{}, syncEach: syncEach}
	if d.devName, err = dev.Name(); err != nil {
		return nil, fmt.Errorf("%w: device %d name: %v", ErrUnavailable, ordinal, err)
	}
	d.note("device %d: %s, %s", ordinal, d.devName, deviceFacts(dev))
	if d.ctx, err = dev.RetainPrimaryCtx(); err != nil {
		return nil, fmt.Errorf("%w: device %d context: %v", ErrUnavailable, ordinal, err)
	}
	d.retained = true
	defer d.enter()()
	if err := d.load(); err != nil {
		d.closeCurrent()
		return nil, err
	}
	if d.stream, err = cu.MakeStream(cu.NonBlocking); err != nil {
		d.closeCurrent()
		return nil, fmt.Errorf("cuda: stream on %s: %w", d.devName, err)
	}
	return d, nil
}

// deviceFacts is the driver version, compute capability, multiprocessors
// and memory of dev, for the log.
func deviceFacts(dev cu.Device) string {
	v := cu.Version() // 1000*major + 10*minor
	major, _ := dev.Attribute(cu.ComputeCapabilityMajor)
	minor, _ := dev.Attribute(cu.ComputeCapabilityMinor)
	sms, _ := dev.Attribute(cu.MultiprocessorCount)
	mem, _ := dev.TotalMem()
	return fmt.Sprintf("driver CUDA %d.%d, compute capability %d.%d, %d SMs, %.1f GiB",
		v/1000, v%1000/10, major, minor, sms, float64(mem)/(1<<30))
}

// note adds a line to what describe reports.
func (d *device) note(format string, args ...any) {
	d.info = append(d.info, fmt.Sprintf(format, args...))
}

// load loads every kernel family and resolves every kernel of
// kernelNames. The context must be current. Per family it tries, in
// order: the PTX of d.arch, JIT-compiled by the driver for the card; the
// CUBIN of d.arch (machine code, no JIT, for compute capability d.arch/10
// .x); the compute_80 PTX. A failure is noted (describe) before the next
// try; when all fail, the error carries each one's.
func (d *device) load() error {
	for _, fam := range families {
		tries := []kernelImage{{"PTX", d.arch, ptxImage}, {"CUBIN", d.arch, cubinImage}}
		if d.arch != archs[0] {
			tries = append(tries, kernelImage{"PTX", archs[0], ptxImage})
		}
		var errs []string
		var mod cu.Module
		for _, try := range tries {
			var err error
			if mod, err = d.loadModule(fam, try); err == nil {
				break
			}
			d.note("kernels %s: %v", fam, err)
			errs = append(errs, err.Error())
		}
		if len(errs) == len(tries) {
			return fmt.Errorf("cuda: no kernel image of %s loads on %s: %s", fam, d.devName, strings.Join(errs, "; "))
		}
		d.mods = append(d.mods, mod)
	}
	var regs []string
	for _, name := range kernelNames() {
		f, err := d.fn(name)
		if err != nil {
			return err
		}
		n, _ := f.Attribute(cu.NumRegs)
		limit, _ := f.Attribute(cu.FnMaxThreadsPerBlock)
		regs = append(regs, fmt.Sprintf("%s %d/%d", name, n, limit))
	}
	d.note("kernels resolved (registers/max threads per block): %s", strings.Join(regs, ", "))
	return nil
}

// kernelImage is one embedded form of the kernels: PTX or CUBIN for an
// arch, read by code (PTX or CUBIN).
type kernelImage struct {
	kind string
	arch int
	code func(family string, arch int) ([]byte, error)
}

// loadModule loads one family's embedded image through
// cuModuleLoadDataEx. Its error carries the JIT's error log.
func (d *device) loadModule(fam string, img kernelImage) (cu.Module, error) {
	kind, arch := img.kind, img.arch
	image, err := img.code(fam, arch)
	if err != nil {
		return cu.Module{}, fmt.Errorf("embedded %s %s sm%d: %w", kind, fam, arch, err)
	}
	errLog := &cu.JITErrorLogBuffer{Buffer: make([]byte, 16<<10)}
	infoLog := &cu.JITInfoLogBuffer{Buffer: make([]byte, 16<<10)}
	t0 := time.Now()
	// LoadDataEx copies the image into C memory with a NUL after it (the
	// PTX text must end in one; an ELF CUBIN is read by its own sizes).
	mod, err := cu.LoadDataEx(string(image), errLog, infoLog)
	el, il := cString(errLog.Buffer), cString(infoLog.Buffer)
	if err != nil {
		return cu.Module{}, fmt.Errorf("load of %s sm%d (%d bytes): %w; JIT error log: %q; info log: %q", kind, arch, len(image), err, el, il)
	}
	d.note("kernels %s: %s sm%d (%d bytes) loaded in %v%s", fam, kind, arch, len(image),
		time.Since(t0).Round(time.Millisecond), logSuffix(il))
	return mod, nil
}

// cString is the text of a NUL-terminated log buffer.
func cString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return strings.TrimSpace(string(b))
}

func logSuffix(s string) string {
	if s == "" {
		return ""
	}
	return fmt.Sprintf("; JIT log: %q", s)
}

// enter pins the goroutine to its OS thread and makes the device's context
// current there; the returned func unpins it. Calls nest.
func (d *device) enter() func() {
	runtime.LockOSThread()
	_ = cu.SetCurrentContext(d.ctx)
	return runtime.UnlockOSThread
}

// fn returns the kernel called name from whichever module has it. The
// context must be current.
func (d *device) fn(name string) (cu.Function, error) {
	if f, ok := d.fns[name]; ok {
		return f, nil
	}
	for _, m := range d.mods {
		if f, err := m.Function(name); err == nil {
			d.fns[name] = f
			return f, nil
		}
	}
	return cu.Function{}, fmt.Errorf("cuda: no kernel %q in the embedded PTX", name)
}

// launch queues kernel name on the stream with grid (gx, gy) and block
// (bx, by); it does not wait unless syncEach. Each argument is one 8-byte
// slot: cu.Launch copies 8 bytes per parameter, and the driver reads as
// many as the kernel's parameter has (the low half of the slot for a
// 32-bit float, little-endian).
func (d *device) launch(name string, gx, gy, bx, by int, args ...arg) error {
	defer d.enter()()
	f, err := d.fn(name)
	if err != nil {
		return err
	}
	ps := make([]unsafe.Pointer, len(args))
	for i := range args {
		ps[i] = unsafe.Pointer(&args[i])
	}
	if err := f.Launch(gx, gy, 1, bx, by, 1, 0, d.stream, ps); err != nil {
		return fmt.Errorf("cuda: launch %s (grid %dx%d, block %dx%d): %w", name, gx, gy, bx, by, err)
	}
	runtime.KeepAlive(args)
	if d.syncEach {
		if err := d.stream.Synchronize(); err != nil {
			return fmt.Errorf("cuda: kernel %s (grid %dx%d, block %dx%d) failed: %w", name, gx, gy, bx, by, err)
		}
	}
	return nil
}

func (d *device) name() string { return d.devName }

func (d *device) describe() []string { return d.info }

func (d *device) alloc(n int64, what string) (dptr, error) {
	defer d.enter()()
	p, err := cu.MemAlloc(max(n, 1))
	if err != nil {
		free, total, _ := cu.MemInfo()
		return 0, fmt.Errorf("cuda: allocate %d bytes for %s on %s (%d of %d bytes free): %w", n, what, d.devName, free, total, err)
	}
	return dptr(p), nil
}

func (d *device) free(p *dptr) {
	if *p != 0 {
		defer d.enter()()
		_ = cu.MemFree(cu.DevicePtr(*p))
		*p = 0
	}
}

// htod queues a copy from pageable host memory: the driver stages src
// before it returns, so src may be reused at once.
func (d *device) htod(dst dptr, src unsafe.Pointer, n int64) error {
	defer d.enter()()
	if err := cu.MemcpyHtoDAsync(cu.DevicePtr(dst), src, n, d.stream); err != nil {
		return fmt.Errorf("cuda: copy %d bytes to the device: %w", n, err)
	}
	return nil
}

// dtoh queues a copy to pageable host memory (which the driver completes
// before it returns); dst is valid after sync.
func (d *device) dtoh(dst unsafe.Pointer, src dptr, n int64) error {
	defer d.enter()()
	if err := cu.MemcpyDtoHAsync(dst, cu.DevicePtr(src), n, d.stream); err != nil {
		return fmt.Errorf("cuda: copy %d bytes from the device: %w", n, err)
	}
	return nil
}

func (d *device) dtod(dst, src dptr, n int64) error {
	defer d.enter()()
	return cu.MemcpyDtoDAsync(cu.DevicePtr(dst), cu.DevicePtr(src), n, d.stream)
}

func (d *device) sync() error {
	defer d.enter()()
	return d.stream.Synchronize()
}

// close releases the stream, the modules and the context.
func (d *device) close() {
	defer d.enter()()
	d.closeCurrent()
}

// closeCurrent is close with the context already current.
func (d *device) closeCurrent() {
	if d.stream != (cu.Stream{}) {
		_ = d.stream.Synchronize()
		d.freeGraphs()
		_ = d.stream.Destroy()
	}
	for _, m := range d.mods {
		_ = m.Unload()
	}
	d.mods, d.fns = nil, map[string]cu.Function{}
	if d.retained {
		_ = d.dev.ReleasePrimaryCtx()
		d.retained = false
	}
}

// emulated reports that kernels run on the host emulator; false: a GPU.
const emulated = false
