package ref

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"github.com/jupiterrider/ffi"
)

// ErrNoCPUBackend reports that the CPU backend library ggml chose is not
// known to this process, so its kernels cannot be called directly.
var ErrNoCPUBackend = errors.New("ggml CPU backend not found")

// cTypeTraitsCPU mirrors struct ggml_type_traits_cpu (ggml-cpu.h, v0.5.0).
type cTypeTraitsCPU struct {
	fromFloat  uintptr // void (*)(const float *, void *, int64_t)
	vecDot     uintptr // void (*)(int n, float *s, size_t bs, const void *x, size_t bx, const void *y, size_t by, int nrc)
	vecDotType int32
	nrows      int64
}

// cpuFuncs are the symbols of the CPU backend variant (libggml-cpu-*.so)
// that ggml_backend_load_all_from_path selected for this machine.
type cpuFuncs struct {
	path           string
	lib            ffi.Lib
	cpuInit        ffi.Fun // void ggml_cpu_init(void)
	typeTraits     ffi.Fun // const struct ggml_type_traits_cpu * ggml_get_type_traits_cpu(enum ggml_type)
	vecDot         ffi.Cif
	threadpoolNew  ffi.Fun // struct ggml_threadpool * ggml_threadpool_new(struct ggml_threadpool_params *)
	threadpoolFree ffi.Fun // void ggml_threadpool_free(struct ggml_threadpool *)
}

func bindCPU(path string) (*cpuFuncs, error) {
	lib, err := ffi.Load(path)
	if err != nil {
		return nil, err
	}
	c := &cpuFuncs{path: path, lib: lib}
	if c.cpuInit, err = prep(lib, "ggml_cpu_init", &ffi.TypeVoid); err != nil {
		return nil, err
	}
	if c.typeTraits, err = prep(lib, "ggml_get_type_traits_cpu", &ffi.TypePointer, &ffi.TypeSint32); err != nil {
		return nil, err
	}
	if c.threadpoolNew, err = prep(lib, "ggml_threadpool_new", &ffi.TypePointer, &ffi.TypePointer); err != nil {
		return nil, err
	}
	if c.threadpoolFree, err = prep(lib, "ggml_threadpool_free", &ffi.TypeVoid, &ffi.TypePointer); err != nil {
		return nil, err
	}
	if st := prepCif(&c.vecDot, &ffi.TypeVoid,
		&ffi.TypeSint32, &ffi.TypePointer, &ffi.TypeUint64, &ffi.TypePointer,
		&ffi.TypeUint64, &ffi.TypePointer, &ffi.TypeUint64, &ffi.TypeSint32); st != ffi.OK {
		return nil, fmt.Errorf("vec_dot call interface: %v", st)
	}
	return c, nil
}

func (l *Lib) cpuTraits(typ uint32) (*cTypeTraitsCPU, error) {
	if l.cpu == nil {
		return nil, ErrNoCPUBackend
	}
	if typ >= typeCount {
		return nil, fmt.Errorf("%w: %d", ErrUnsupportedType, typ)
	}
	t := int32(typ)
	var p *cTypeTraitsCPU
	l.cpu.typeTraits.Call(&p, &t)
	if p == nil {
		return nil, fmt.Errorf("%w: %d", ErrUnsupportedType, typ)
	}
	return p, nil
}

// VecDotType is the type ggml's CPU backend quantizes activations to before a
// dot product with a row of typ (Q8_K for the K-quants, Q8_0 for Q4_0, Q5_0
// and Q8_0, F16 for F16 ...), as ggml_get_type_traits_cpu reports it.
func (l *Lib) VecDotType(typ uint32) (uint32, error) {
	p, err := l.cpuTraits(typ)
	if err != nil {
		return 0, err
	}
	if p.vecDot == 0 {
		return 0, fmt.Errorf("%w: no vec_dot for type %d", ErrUnsupportedType, typ)
	}
	return uint32(p.vecDotType), nil
}

// QuantizeRowCPU encodes src as typ blocks with the CPU backend's from_float —
// the code llama.cpp runs on activations at inference time, SIMD where the
// machine has it, which may round differently from [Lib.QuantizeRow].
// len(src) must be a multiple of the block size ([ErrShape]); it returns
// [ErrNoCPUBackend] when the backend library was not found.
func (l *Lib) QuantizeRowCPU(typ uint32, src []float32) ([]byte, error) {
	p, err := l.ggml.traits(typ)
	if err != nil {
		return nil, err
	}
	if _, err := checkRow(typ, p, len(src), int(^uint(0)>>1)); err != nil {
		return nil, err
	}
	cp, err := l.cpuTraits(typ)
	if err != nil {
		return nil, err
	}
	if cp.fromFloat == 0 {
		return nil, fmt.Errorf("%w: %s has no CPU from_float", ErrUnsupportedType, cString(p.typeName))
	}
	out := make([]byte, len(src)/int(p.blckSize)*int(p.typeSize))
	if len(src) == 0 {
		return out, nil
	}
	l.ggml.callRow(cp.fromFloat, unsafe.Pointer(&src[0]), unsafe.Pointer(&out[0]), len(src))
	runtime.KeepAlive(src)
	return out, nil
}

// VecDot is the CPU backend's dot product of n values: x a row of typ blocks,
// y a row of [Lib.VecDotType](typ) blocks, as ggml's matrix multiplication
// computes each output element (ggml_vec_dot_*, one row at a time). n must be
// a multiple of both block sizes and x, y must hold n values ([ErrShape]).
func (l *Lib) VecDot(typ uint32, n int, x, y []byte) (float32, error) {
	cp, err := l.cpuTraits(typ)
	if err != nil {
		return 0, err
	}
	if cp.vecDot == 0 {
		return 0, fmt.Errorf("%w: no vec_dot for type %d", ErrUnsupportedType, typ)
	}
	px, err := l.ggml.traits(typ)
	if err != nil {
		return 0, err
	}
	py, err := l.ggml.traits(uint32(cp.vecDotType))
	if err != nil {
		return 0, err
	}
	if _, err := checkRow(typ, px, n, len(x)); err != nil {
		return 0, fmt.Errorf("x: %w", err)
	}
	if _, err := checkRow(uint32(cp.vecDotType), py, n, len(y)); err != nil {
		return 0, fmt.Errorf("y: %w", err)
	}
	if n == 0 {
		return 0, nil
	}
	var s float32
	nn, nrc := int32(n), int32(1)
	sp, xp, yp := unsafe.Pointer(&s), unsafe.Pointer(&x[0]), unsafe.Pointer(&y[0])
	var bs, bx, by uint64
	f := ffi.Fun{Addr: cp.vecDot, Cif: &l.cpu.vecDot}
	f.Call(nil, &nn, &sp, &bs, &xp, &bx, &yp, &by, &nrc)
	runtime.KeepAlive(x)
	runtime.KeepAlive(y)
	return s, nil
}

// GELUTableF16 returns a copy of the CPU backend's ggml_table_gelu_f16 (after
// ggml_cpu_init, which fills it): for every f16 bit pattern, the f16 GELU
// that ggml_vec_gelu_f32 and ggml_vec_geglu_f32 look up (ggml defines
// GGML_GELU_FP16). It returns [ErrNoCPUBackend] when the backend library
// was not found.
func (l *Lib) GELUTableF16() ([]uint16, error) {
	if l.cpu == nil {
		return nil, ErrNoCPUBackend
	}
	l.cpu.cpuInit.Call(nil)
	addr, err := l.cpu.lib.Get("ggml_table_gelu_f16")
	if err != nil {
		return nil, fmt.Errorf("%w: ggml_table_gelu_f16: %v", ErrNoCPUBackend, err)
	}
	// addr is a symbol of the mapped library, not Go memory: read it
	// through a pointer-typed copy (a uintptr-to-pointer conversion vet
	// would flag).
	table := unsafe.Slice(*(**uint16)(unsafe.Pointer(&addr)), 1<<16)
	return append([]uint16(nil), table...), nil
}
