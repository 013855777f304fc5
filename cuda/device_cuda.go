//go:build cuda

package cuda

import (
	"fmt"
	"runtime"
	"unsafe"

	"gorgonia.org/cu"
)

// device is the backend of a `cuda` build: one GPU's primary context, the JIT-compiled kernel modules and
// the stream every launch goes on.
type device struct {
	dev     cu.Device
	ctx     cu.CUContext
	devName string
	arch    int
	stream  cu.Stream
	mods    []cu.Module
	fns     map[string]cu.Function
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

// openDevice retains the device's primary context, JIT-compiles every
// kernel family and makes the stream. The calling goroutine must hold its
// OS thread (enter).
func openDevice(ordinal int) (*device, error) {
	dev, arch, err := probeDevice(ordinal)
	if err != nil {
		return nil, err
	}
	d := &device{dev: dev, arch: arch, fns: map[string]cu.Function{}}
	if d.devName, err = dev.Name(); err != nil {
		return nil, fmt.Errorf("%w: device %d name: %v", ErrUnavailable, ordinal, err)
	}
	if d.ctx, err = dev.RetainPrimaryCtx(); err != nil {
		return nil, fmt.Errorf("%w: device %d context: %v", ErrUnavailable, ordinal, err)
	}
	if err := cu.SetCurrentContext(d.ctx); err != nil {
		d.close()
		return nil, fmt.Errorf("cuda: set context: %w", err)
	}
	for _, fam := range Families {
		ptx, err := PTX(fam, arch)
		if err != nil {
			d.close()
			return nil, fmt.Errorf("cuda: embedded PTX %s sm%d: %w", fam, arch, err)
		}
		mod, err := cu.LoadData(string(ptx))
		if err != nil {
			d.close()
			return nil, fmt.Errorf("cuda: JIT of %s for compute_%d on %s: %w", fam, arch, d.devName, err)
		}
		d.mods = append(d.mods, mod)
	}
	if d.stream, err = cu.MakeStream(cu.NonBlocking); err != nil {
		d.close()
		return nil, fmt.Errorf("cuda: stream: %w", err)
	}
	return d, nil
}

// enter pins the goroutine to its OS thread and makes the device's context
// current there; the returned func undoes the pinning.
func (d *device) enter() func() {
	runtime.LockOSThread()
	_ = cu.SetCurrentContext(d.ctx)
	return runtime.UnlockOSThread
}

// fn returns the kernel called name from whichever module has it.
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
// (bx, by); it does not wait.
func (d *device) launch(name string, gx, gy, bx, by int, args ...arg) error {
	f, err := d.fn(name)
	if err != nil {
		return err
	}
	ps := make([]unsafe.Pointer, len(args))
	for i := range args {
		ps[i] = unsafe.Pointer(&args[i])
	}
	if err := f.Launch(gx, gy, 1, bx, by, 1, 0, d.stream, ps); err != nil {
		return fmt.Errorf("cuda: launch %s: %w", name, err)
	}
	return nil
}

// openBackend opens the GPU at ordinal (see openDevice).
func openBackend(ordinal int) (backend, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return openDevice(ordinal)
}

func (d *device) name() string { return d.devName }

func (d *device) alloc(n int64, what string) (dptr, error) {
	p, err := cu.MemAlloc(max(n, 1))
	if err != nil {
		return 0, fmt.Errorf("cuda: allocate %d bytes for %s on %s: %w", n, what, d.devName, err)
	}
	return dptr(p), nil
}

func (d *device) free(p *dptr) {
	if *p != 0 {
		_ = cu.MemFree(cu.DevicePtr(*p))
		*p = 0
	}
}

func (d *device) htod(dst dptr, src unsafe.Pointer, n int64) error {
	return cu.MemcpyHtoDAsync(cu.DevicePtr(dst), src, n, d.stream)
}

func (d *device) dtoh(dst unsafe.Pointer, src dptr, n int64) error {
	return cu.MemcpyDtoHAsync(dst, cu.DevicePtr(src), n, d.stream)
}

func (d *device) dtod(dst, src dptr, n int64) error {
	return cu.MemcpyDtoDAsync(cu.DevicePtr(dst), cu.DevicePtr(src), n, d.stream)
}

func (d *device) sync() error { return d.stream.Synchronize() }

// close releases the stream, the modules and the context.
func (d *device) close() {
	if d.stream != (cu.Stream{}) {
		_ = d.stream.Destroy()
	}
	for _, m := range d.mods {
		_ = m.Unload()
	}
	d.mods = nil
	_ = d.dev.ReleasePrimaryCtx()
}

// emulated reports that kernels run on the host emulator; false: a GPU.
const emulated = false
