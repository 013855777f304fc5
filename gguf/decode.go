package gguf

import (
	"bufio"
	"encoding/binary"
	"io"
	"math"
)

// maxArrayDepth bounds the nesting of array values (an array of arrays is
// depth 2). Real files nest at most once; the bound keeps a hostile file from
// driving deep recursion.
const maxArrayDepth = 8

// decoder reads little-endian GGUF fields from a byte stream, tracking the
// absolute offset and the bytes left so that no count or length is trusted
// beyond what the file could hold.
type decoder struct {
	r    *bufio.Reader
	off  int64 // absolute offset of the next byte
	size int64 // total size of the input
	buf  [8]byte
	// scratch holds string bytes before they are copied into a string; it
	// grows to the longest string read, which the file's size bounds.
	scratch []byte
}

func newDecoder(r io.ReaderAt, size int64) *decoder {
	return &decoder{r: bufio.NewReaderSize(io.NewSectionReader(r, 0, size), 64<<10), size: size}
}

func (d *decoder) left() int64 { return d.size - d.off }

func (d *decoder) fail(off int64, what string, err error) error {
	return &FormatError{Offset: off, What: what, Err: err}
}

// full reads len(p) bytes into p.
func (d *decoder) full(p []byte, what string) error {
	start := d.off
	if int64(len(p)) > d.left() {
		return d.fail(start, what, ErrTruncated)
	}
	n, err := io.ReadFull(d.r, p)
	d.off += int64(n)
	if err != nil {
		return d.fail(start, what, ErrTruncated)
	}
	return nil
}

func (d *decoder) fixed(n int, what string) ([]byte, error) {
	b := d.buf[:n]
	if err := d.full(b, what); err != nil {
		return nil, err
	}
	return b, nil
}

func (d *decoder) u32(what string) (uint32, error) {
	b, err := d.fixed(4, what)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b), nil
}

func (d *decoder) u64(what string) (uint64, error) {
	b, err := d.fixed(8, what)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b), nil
}

// str reads a GGUF string: a uint64 length and the bytes. It allocates only
// the string itself; what is formatted into an error message only on
// failure.
func (d *decoder) str(what string) (string, error) {
	start := d.off
	b, err := d.fixed(8, what)
	if err != nil {
		return "", d.fail(start, what+" length", ErrTruncated)
	}
	n := binary.LittleEndian.Uint64(b)
	if n > uint64(d.left()) {
		return "", d.fail(start, what, ErrTruncated)
	}
	if uint64(cap(d.scratch)) < n {
		d.scratch = make([]byte, n)
	}
	p := d.scratch[:n]
	if err := d.full(p, what); err != nil {
		return "", err
	}
	return string(p), nil
}

// value reads one value of type t; depth is the array nesting so far.
func (d *decoder) value(t ValueType, depth int, what string) (any, error) {
	if t == ValueString {
		return d.str(what)
	}
	if t == ValueArray {
		return d.array(depth+1, what)
	}
	size := t.fixedSize()
	if size == 0 {
		return nil, d.fail(d.off, what+" value type", ErrUnknownType)
	}
	b, err := d.fixed(size, what)
	if err != nil {
		return nil, err
	}
	return scalar(t, b), nil
}

// scalar decodes a fixed-size value of type t from b.
func scalar(t ValueType, b []byte) any {
	le := binary.LittleEndian
	switch t {
	case ValueUint8:
		return b[0]
	case ValueInt8:
		return int8(b[0])
	case ValueBool:
		return b[0] != 0
	case ValueUint16:
		return le.Uint16(b)
	case ValueInt16:
		return int16(le.Uint16(b))
	case ValueUint32:
		return le.Uint32(b)
	case ValueInt32:
		return int32(le.Uint32(b))
	case ValueFloat32:
		return math.Float32frombits(le.Uint32(b))
	case ValueUint64:
		return le.Uint64(b)
	case ValueInt64:
		return int64(le.Uint64(b))
	default: // ValueFloat64
		return math.Float64frombits(le.Uint64(b))
	}
}

// array reads an array value: element type, count, elements.
func (d *decoder) array(depth int, what string) (Array, error) {
	start := d.off
	if depth > maxArrayDepth {
		return Array{}, d.fail(start, what+" array nested at most 8 deep", ErrMalformed)
	}
	et32, err := d.u32(what + " array element type")
	if err != nil {
		return Array{}, err
	}
	et := ValueType(et32)
	if !et.Known() {
		return Array{}, d.fail(start, what+" array element type", ErrUnknownType)
	}
	n, err := d.u64(what + " array length")
	if err != nil {
		return Array{}, err
	}
	if min := et.minSize(); min > 0 && n > uint64(d.left()/min) {
		return Array{}, d.fail(start, what+" array elements", ErrTruncated)
	}
	switch et {
	case ValueString:
		// Grown by append: a claimed count is backed by at least 8 bytes
		// per element, but a string costs 16 bytes of header in memory.
		vals := make([]string, 0, min(n, 1<<16))
		elemWhat := what + " array string"
		for i := uint64(0); i < n; i++ {
			s, err := d.str(elemWhat)
			if err != nil {
				return Array{}, err
			}
			vals = append(vals, s)
		}
		return Array{et, vals}, nil
	case ValueArray:
		vals := make([]Array, 0, min(n, 1<<12))
		for i := uint64(0); i < n; i++ {
			a, err := d.array(depth+1, what)
			if err != nil {
				return Array{}, err
			}
			vals = append(vals, a)
		}
		return Array{et, vals}, nil
	}
	size := et.fixedSize()
	raw := make([]byte, n*uint64(size))
	if err := d.full(raw, what+" array elements"); err != nil {
		return Array{}, err
	}
	return Array{et, decodeSlice(et, raw, int(n))}, nil
}

// decodeSlice decodes n fixed-size elements of type t from raw.
func decodeSlice(t ValueType, raw []byte, n int) any {
	le := binary.LittleEndian
	switch t {
	case ValueUint8:
		return raw
	case ValueInt8:
		return fill(n, func(i int) int8 { return int8(raw[i]) })
	case ValueBool:
		return fill(n, func(i int) bool { return raw[i] != 0 })
	case ValueUint16:
		return fill(n, func(i int) uint16 { return le.Uint16(raw[2*i:]) })
	case ValueInt16:
		return fill(n, func(i int) int16 { return int16(le.Uint16(raw[2*i:])) })
	case ValueUint32:
		return fill(n, func(i int) uint32 { return le.Uint32(raw[4*i:]) })
	case ValueInt32:
		return fill(n, func(i int) int32 { return int32(le.Uint32(raw[4*i:])) })
	case ValueFloat32:
		return fill(n, func(i int) float32 { return math.Float32frombits(le.Uint32(raw[4*i:])) })
	case ValueUint64:
		return fill(n, func(i int) uint64 { return le.Uint64(raw[8*i:]) })
	case ValueInt64:
		return fill(n, func(i int) int64 { return int64(le.Uint64(raw[8*i:])) })
	default: // ValueFloat64
		return fill(n, func(i int) float64 { return math.Float64frombits(le.Uint64(raw[8*i:])) })
	}
}

func fill[T any](n int, at func(int) T) []T {
	s := make([]T, n)
	for i := range s {
		s[i] = at(i)
	}
	return s
}
