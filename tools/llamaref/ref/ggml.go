package ref

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"github.com/jupiterrider/ffi"
)

// ggml type ids (enum ggml_type), the same numbers GGUF files record.
const (
	TypeF32  uint32 = 0
	TypeF16  uint32 = 1
	TypeQ4_0 uint32 = 2
	TypeQ4_1 uint32 = 3
	TypeQ5_0 uint32 = 6
	TypeQ5_1 uint32 = 7
	TypeQ8_0 uint32 = 8
	TypeQ8_1 uint32 = 9
	TypeQ2_K uint32 = 10
	TypeQ3_K uint32 = 11
	TypeQ4_K uint32 = 12
	TypeQ5_K uint32 = 13
	TypeQ6_K uint32 = 14
	TypeQ8_K uint32 = 15
	TypeBF16 uint32 = 30

	typeCount uint32 = 43 // GGML_TYPE_COUNT in llama.cpp v0.5.0
)

// ErrUnsupportedType reports a ggml type the requested operation has no code for.
var ErrUnsupportedType = errors.New("unsupported ggml type")

// ErrShape reports a length that does not fit the type's block size.
var ErrShape = errors.New("length does not fit the block size")

// TypeInfo describes a ggml type as ggml_get_type_traits reports it.
type TypeInfo struct {
	Name      string // ggml's name, e.g. "q4_K", "bf16"
	BlockSize int    // values per block (1 for F32/F16/BF16, 32, 256)
	TypeSize  int    // bytes per block
	Quantized bool
}

// RowSize is the byte size of n values (n a multiple of BlockSize).
func (t TypeInfo) RowSize(n int) int { return n / t.BlockSize * t.TypeSize }

// cTypeTraits mirrors struct ggml_type_traits (ggml.h, v0.5.0).
type cTypeTraits struct {
	typeName           *byte
	blckSize           int64
	blckSizeInterleave int64
	typeSize           uintptr
	isQuantized        bool
	toFloat            uintptr // void (*)(const void *, float *, int64_t)
	fromFloatRef       uintptr // void (*)(const float *, void *, int64_t)
}

// ggmlFuncs are the libggml-base symbols this package calls.
type ggmlFuncs struct {
	lib           ffi.Lib
	typeTraits    ffi.Fun // const struct ggml_type_traits * ggml_get_type_traits(enum ggml_type)
	quantizeChunk ffi.Fun // size_t ggml_quantize_chunk(type, const float*, void*, int64 start, int64 nrows, int64 n_per_row, const float* imatrix)
	rowConv       ffi.Cif // void (*)(const void *, void *, int64_t): to_float and from_float alike
	gguf          ggufFuncs
}

func bindGGML(lib ffi.Lib) (*ggmlFuncs, error) {
	g := &ggmlFuncs{lib: lib}
	var err error
	if g.typeTraits, err = prep(lib, "ggml_get_type_traits", &ffi.TypePointer, &ffi.TypeSint32); err != nil {
		return nil, fmt.Errorf("ggml_get_type_traits: %w", err)
	}
	if g.quantizeChunk, err = prep(lib, "ggml_quantize_chunk", &ffi.TypeUint64,
		&ffi.TypeSint32, &ffi.TypePointer, &ffi.TypePointer,
		&ffi.TypeSint64, &ffi.TypeSint64, &ffi.TypeSint64, &ffi.TypePointer); err != nil {
		return nil, fmt.Errorf("ggml_quantize_chunk: %w", err)
	}
	if st := prepCif(&g.rowConv, &ffi.TypeVoid,
		&ffi.TypePointer, &ffi.TypePointer, &ffi.TypeSint64); st != ffi.OK {
		return nil, fmt.Errorf("row conversion call interface: %v", st)
	}
	if err := g.gguf.bind(lib); err != nil {
		return nil, err
	}
	return g, nil
}

// traits returns ggml's traits of typ, or an error wrapping ErrUnsupportedType.
func (g *ggmlFuncs) traits(typ uint32) (*cTypeTraits, error) {
	if typ >= typeCount {
		return nil, fmt.Errorf("%w: %d", ErrUnsupportedType, typ)
	}
	t := int32(typ)
	var p *cTypeTraits
	g.typeTraits.Call(&p, &t)
	if p == nil || p.blckSize <= 0 || p.typeSize == 0 {
		return nil, fmt.Errorf("%w: %d (removed from ggml)", ErrUnsupportedType, typ)
	}
	return p, nil
}

// TypeInfo returns ggml's description of typ, or an error wrapping
// [ErrUnsupportedType] for an id ggml does not define.
func (l *Lib) TypeInfo(typ uint32) (TypeInfo, error) {
	p, err := l.ggml.traits(typ)
	if err != nil {
		return TypeInfo{}, err
	}
	return TypeInfo{
		Name:      cString(p.typeName),
		BlockSize: int(p.blckSize),
		TypeSize:  int(p.typeSize),
		Quantized: p.isQuantized,
	}, nil
}

// rowFunc returns the to_float (toF32) or from_float_ref code of typ: the
// traits' pointer, else the exported dequantize_row_<name> or
// quantize_row_<name>_ref symbol (Q8_K has only those). 0 when there is none.
func (g *ggmlFuncs) rowFunc(p *cTypeTraits, toF32 bool) uintptr {
	fn, sym := p.fromFloatRef, "quantize_row_"+cString(p.typeName)+"_ref"
	if toF32 {
		fn, sym = p.toFloat, "dequantize_row_"+cString(p.typeName)
	}
	if fn != 0 {
		return fn
	}
	addr, err := g.lib.Get(sym)
	if err != nil {
		return 0
	}
	return addr
}

// checkRow validates n values of type p against a buffer of have bytes and
// returns the bytes n values take.
func checkRow(typ uint32, p *cTypeTraits, n, have int) (int, error) {
	bs := int(p.blckSize)
	if n < 0 || n%bs != 0 {
		return 0, fmt.Errorf("%w: %d values of %s (blocks of %d)", ErrShape, n, cString(p.typeName), bs)
	}
	need := n / bs * int(p.typeSize)
	if have < need {
		return 0, fmt.Errorf("%w: %d values of %s need %d bytes, have %d", ErrShape, n, cString(p.typeName), need, have)
	}
	return need, nil
}

// Dequantize decodes the first n values of data, a run of typ blocks, to
// float32 with ggml's own to_float code (libggml-base: dequantize_row_*,
// ggml_fp16_to_fp32_row, ggml_bf16_to_fp32_row).
//
// n must be a multiple of the type's block size and data must hold at least
// n/BlockSize*TypeSize bytes ([ErrShape] otherwise). Types without decoding
// code return [ErrUnsupportedType]. The result is a new []float32 of length n.
func (l *Lib) Dequantize(typ uint32, data []byte, n int) ([]float32, error) {
	p, err := l.ggml.traits(typ)
	if err != nil {
		return nil, err
	}
	need, err := checkRow(typ, p, n, len(data))
	if err != nil {
		return nil, err
	}
	out := make([]float32, n)
	if n == 0 {
		return out, nil
	}
	if typ == TypeF32 {
		copy(out, unsafe.Slice((*float32)(unsafe.Pointer(&data[0])), n))
		return out, nil
	}
	fn := l.ggml.rowFunc(p, true)
	if fn == 0 {
		return nil, fmt.Errorf("%w: %s has no to_float", ErrUnsupportedType, cString(p.typeName))
	}
	l.ggml.callRow(fn, unsafe.Pointer(&data[:need][0]), unsafe.Pointer(&out[0]), n)
	runtime.KeepAlive(data)
	return out, nil
}

// callRow calls a row conversion function fn(src, dst, n).
func (g *ggmlFuncs) callRow(fn uintptr, src, dst unsafe.Pointer, n int) {
	k := int64(n)
	f := ffi.Fun{Addr: fn, Cif: &g.rowConv}
	f.Call(nil, &src, &dst, &k)
}

// chunkTypes are the types ggml_quantize_chunk encodes without an importance
// matrix (its switch; the IQ types need one and are left out).
var chunkTypes = map[uint32]bool{
	TypeF32: true, TypeF16: true, TypeBF16: true,
	TypeQ4_0: true, TypeQ4_1: true, TypeQ5_0: true, TypeQ5_1: true, TypeQ8_0: true,
	TypeQ2_K: true, TypeQ3_K: true, TypeQ4_K: true, TypeQ5_K: true, TypeQ6_K: true,
}

// QuantizeRows encodes src, rows of nPerRow values, as typ blocks with the
// code llama.cpp's file quantizer uses: ggml_quantize_chunk with no importance
// matrix (for the K-quants that is quantize_row_*_ref). Q8_K, an activation
// type the chunk quantizer lacks, uses quantize_row_q8_K_ref.
//
// nPerRow must be positive, divide len(src) and be a multiple of the block
// size ([ErrShape]). The result is len(src)/BlockSize*TypeSize bytes.
func (l *Lib) QuantizeRows(typ uint32, src []float32, nPerRow int) ([]byte, error) {
	p, err := l.ggml.traits(typ)
	if err != nil {
		return nil, err
	}
	if nPerRow <= 0 || len(src)%nPerRow != 0 {
		return nil, fmt.Errorf("%w: %d values in rows of %d", ErrShape, len(src), nPerRow)
	}
	if _, err := checkRow(typ, p, nPerRow, int(^uint(0)>>1)); err != nil {
		return nil, err
	}
	size := len(src) / int(p.blckSize) * int(p.typeSize)
	out := make([]byte, size)
	if len(src) == 0 {
		return out, nil
	}
	sp, dp := unsafe.Pointer(&src[0]), unsafe.Pointer(&out[0])
	switch {
	case chunkTypes[typ]:
		t, start, nrows, per := int32(typ), int64(0), int64(len(src)/nPerRow), int64(nPerRow)
		var imatrix unsafe.Pointer
		var written uint64
		l.ggml.quantizeChunk.Call(&written, &t, &sp, &dp, &start, &nrows, &per, &imatrix)
		if int(written) != size {
			return nil, fmt.Errorf("ggml_quantize_chunk(%s) wrote %d bytes, want %d", cString(p.typeName), written, size)
		}
	default:
		fn := l.ggml.rowFunc(p, false)
		if fn == 0 {
			return nil, fmt.Errorf("%w: %s has no reference quantizer", ErrUnsupportedType, cString(p.typeName))
		}
		l.ggml.callRow(fn, sp, dp, len(src))
	}
	runtime.KeepAlive(src)
	runtime.KeepAlive(out)
	return out, nil
}

// QuantizeRow is [Lib.QuantizeRows] of one row (nPerRow = len(src)).
func (l *Lib) QuantizeRow(typ uint32, src []float32) ([]byte, error) {
	if len(src) == 0 {
		return []byte{}, nil
	}
	return l.QuantizeRows(typ, src, len(src))
}

// cString copies a NUL-terminated C string.
func cString(p *byte) string {
	if p == nil {
		return ""
	}
	n := 0
	for *(*byte)(unsafe.Add(unsafe.Pointer(p), n)) != 0 {
		n++
	}
	return string(unsafe.Slice(p, n))
}
