package gguf

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
)

// MaxTensorName is the longest tensor name, in bytes, that ggml accepts.
const MaxTensorName = 63

// Writer writes a GGUF version 3 file: declare the metadata with AddKV and
// the tensors with AddTensor, then give each tensor's data with
// WriteTensorData in declaration order, then Close. The header is written at
// the first WriteTensorData (or at Close), so metadata and tensors cannot be
// added after data. Tensors are laid out in declaration order, each at an
// offset that is a multiple of the alignment (general.alignment when added,
// else DefaultAlignment), each padded with zero bytes to the alignment.
//
// Only one tensor's data is held at a time, so files larger than memory can
// be written.
//
// Errors from every method wrap ErrInvalidArgument for misuse, or are the
// underlying writer's errors; after an error of the underlying writer every
// later call returns it.
type Writer struct {
	w         *bufio.Writer
	kv        []KV
	keys      map[string]bool
	tensors   []TensorInfo
	names     map[string]bool
	alignment int64
	dataSize  uint64 // offset after the last declared tensor, padded
	started   bool
	next      int   // index of the next tensor to write
	off       int64 // bytes written so far
	err       error
}

// NewWriter returns a Writer writing to w. Close flushes its buffer.
func NewWriter(w io.Writer) *Writer {
	return &Writer{
		w:         bufio.NewWriterSize(w, 1<<20),
		keys:      make(map[string]bool),
		names:     make(map[string]bool),
		alignment: DefaultAlignment,
	}
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidArgument}, args...)...)
}

// AddKV appends a metadata pair. value must have one of the Go types KV
// lists (an Array, or a plain slice of a scalar type). general.alignment
// must be a uint32 power of two and must come before any AddTensor.
func (w *Writer) AddKV(key string, value any) error {
	if w.started {
		return invalid("AddKV %q after tensor data", key)
	}
	if key == "" {
		return invalid("empty metadata key")
	}
	if w.keys[key] {
		return invalid("metadata key %q added twice", key)
	}
	if err := checkValue(value, 0); err != nil {
		return invalid("metadata key %q: %v", key, err)
	}
	if key == KeyAlignment {
		a, ok := value.(uint32)
		if !ok || a == 0 || a&(a-1) != 0 {
			return invalid("%s must be a power-of-two uint32, not %v", KeyAlignment, value)
		}
		if len(w.tensors) > 0 {
			return invalid("%s after AddTensor", KeyAlignment)
		}
		w.alignment = int64(a)
	}
	w.keys[key] = true
	w.kv = append(w.kv, KV{Key: key, Value: value})
	return nil
}

// checkValue reports why v cannot be encoded, or nil.
func checkValue(v any, depth int) error {
	a, isArray := asArray(v)
	if !isArray {
		if _, ok := ValueTypeOf(v); !ok {
			return fmt.Errorf("no GGUF type for a value of Go type %T", v)
		}
		return nil
	}
	if depth >= maxArrayDepth {
		return fmt.Errorf("arrays nested deeper than %d", maxArrayDepth)
	}
	if !a.Elem.Known() {
		return fmt.Errorf("array element type %v", a.Elem)
	}
	if a.Elem == ValueArray {
		inner, ok := a.Values.([]Array)
		if !ok {
			return fmt.Errorf("array of arrays holds %T, not []Array", a.Values)
		}
		for _, x := range inner {
			if err := checkValue(x, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	if _, nested := a.Values.(Array); nested || a.Len() < 0 {
		return fmt.Errorf("array of %v holds %T", a.Elem, a.Values)
	}
	if e, ok := asArray(a.Values); !ok || e.Elem != a.Elem {
		return fmt.Errorf("array of %v holds %T", a.Elem, a.Values)
	}
	return nil
}

// AddTensor declares a tensor of type typ and dims (ggml order: dims[0] is
// the row length, a multiple of typ.BlockSize(); 1 to MaxDims dims). Its
// data must later be given to WriteTensorData.
func (w *Writer) AddTensor(name string, typ TensorType, dims ...int64) error {
	if w.started {
		return invalid("AddTensor %q after tensor data", name)
	}
	if name == "" || len(name) > MaxTensorName {
		return invalid("tensor name %q must be 1 to %d bytes", name, MaxTensorName)
	}
	if w.names[name] {
		return invalid("tensor %q added twice", name)
	}
	if !typ.Known() {
		return invalid("tensor %q: unknown type %v", name, typ)
	}
	if len(dims) == 0 || len(dims) > MaxDims {
		return invalid("tensor %q: %d dims, want 1 to %d", name, len(dims), MaxDims)
	}
	rows := int64(1)
	for _, d := range dims[1:] {
		if d < 0 || (d != 0 && rows > math.MaxInt64/d) {
			return invalid("tensor %q: dims %v", name, dims)
		}
		rows *= d
	}
	rowBytes, ok := typ.RowSize(dims[0])
	if !ok {
		return invalid("tensor %q: row length %d is not a non-negative multiple of %v's block size %d",
			name, dims[0], typ, typ.BlockSize())
	}
	if rows != 0 && rowBytes > math.MaxInt64/rows {
		return invalid("tensor %q: byte size overflows", name)
	}
	size := rows * rowBytes
	w.names[name] = true
	w.tensors = append(w.tensors, TensorInfo{
		Name: name, Dims: append([]int64(nil), dims...), Type: typ, Offset: w.dataSize, Size: size,
	})
	w.dataSize += uint64(pad(size, w.alignment))
	return nil
}

// pad rounds n up to a multiple of align.
func pad(n, align int64) int64 { return (n + align - 1) / align * align }

// WriteTensorData writes the data of the next declared tensor, which must be
// name; len(data) must equal the tensor's byte size (its rows times
// TensorType.RowSize). The first call writes the header.
func (w *Writer) WriteTensorData(name string, data []byte) error {
	if err := w.start(); err != nil {
		return err
	}
	if w.next >= len(w.tensors) {
		return invalid("WriteTensorData %q: every declared tensor is written", name)
	}
	t := w.tensors[w.next]
	if t.Name != name {
		return invalid("WriteTensorData %q: next declared tensor is %q", name, t.Name)
	}
	if int64(len(data)) != t.Size {
		return invalid("WriteTensorData %q: %d bytes, want %d", name, len(data), t.Size)
	}
	w.write(data)
	w.zeros(pad(t.Size, w.alignment) - t.Size)
	w.next++
	return w.err
}

// Close writes the header if no data was written, checks that every declared
// tensor's data was written, and flushes. It does not close the underlying
// writer.
func (w *Writer) Close() error {
	if err := w.start(); err != nil {
		return err
	}
	if w.next != len(w.tensors) {
		return invalid("Close: tensor %q has no data", w.tensors[w.next].Name)
	}
	if w.err == nil {
		w.err = w.w.Flush()
	}
	return w.err
}

// start writes the header, metadata, tensor infos and padding once.
func (w *Writer) start() error {
	if w.started || w.err != nil {
		return w.err
	}
	w.started = true
	w.write([]byte(Magic))
	w.u32(3)
	w.u64(uint64(len(w.tensors)))
	w.u64(uint64(len(w.kv)))
	for _, kv := range w.kv {
		w.str(kv.Key)
		t, _ := ValueTypeOf(kv.Value)
		w.u32(uint32(t))
		w.value(kv.Value)
	}
	for _, t := range w.tensors {
		w.str(t.Name)
		w.u32(uint32(len(t.Dims)))
		for _, d := range t.Dims {
			w.u64(uint64(d))
		}
		w.u32(uint32(t.Type))
		w.u64(t.Offset)
	}
	if len(w.tensors) > 0 {
		w.zeros(pad(w.off, w.alignment) - w.off)
	}
	return w.err
}

func (w *Writer) write(p []byte) {
	if w.err != nil {
		return
	}
	n, err := w.w.Write(p)
	w.off += int64(n)
	w.err = err
}

func (w *Writer) zeros(n int64) {
	var z [64]byte
	for n > 0 {
		k := min(n, int64(len(z)))
		w.write(z[:k])
		n -= k
	}
}

func (w *Writer) u32(v uint32) { w.write(binary.LittleEndian.AppendUint32(nil, v)) }
func (w *Writer) u64(v uint64) { w.write(binary.LittleEndian.AppendUint64(nil, v)) }

func (w *Writer) str(s string) {
	w.u64(uint64(len(s)))
	w.write([]byte(s))
}

// value encodes v (checked by checkValue) without its type tag.
func (w *Writer) value(v any) {
	if a, ok := asArray(v); ok {
		w.u32(uint32(a.Elem))
		w.u64(uint64(a.Len()))
		switch s := a.Values.(type) {
		case []string:
			for _, x := range s {
				w.str(x)
			}
		case []Array:
			for _, x := range s {
				w.value(x)
			}
		default:
			for i := range a.Len() {
				w.scalar(element(a, i))
			}
		}
		return
	}
	if s, ok := v.(string); ok {
		w.str(s)
		return
	}
	w.scalar(v)
}

// element returns element i of a scalar array.
func element(a Array, i int) any {
	switch s := a.Values.(type) {
	case []float32:
		return s[i]
	case []float64:
		return s[i]
	case []bool:
		return s[i]
	}
	return index(a, i)
}

func (w *Writer) scalar(v any) {
	var b [8]byte
	le := binary.LittleEndian
	switch x := v.(type) {
	case uint8:
		w.write([]byte{x})
	case int8:
		w.write([]byte{byte(x)})
	case bool:
		if x {
			w.write([]byte{1})
		} else {
			w.write([]byte{0})
		}
	case uint16:
		w.write(le.AppendUint16(b[:0], x))
	case int16:
		w.write(le.AppendUint16(b[:0], uint16(x)))
	case uint32:
		w.write(le.AppendUint32(b[:0], x))
	case int32:
		w.write(le.AppendUint32(b[:0], uint32(x)))
	case float32:
		w.write(le.AppendUint32(b[:0], math.Float32bits(x)))
	case uint64:
		w.write(le.AppendUint64(b[:0], x))
	case int64:
		w.write(le.AppendUint64(b[:0], uint64(x)))
	case float64:
		w.write(le.AppendUint64(b[:0], math.Float64bits(x)))
	}
}

// Tensor is a tensor with its data, for Write.
type Tensor struct {
	Name string
	Type TensorType
	Dims []int64 // ggml order, Dims[0] is the row length
	Data []byte
}

// Write writes a whole GGUF file: kv in order, then tensors in order.
func Write(w io.Writer, kv []KV, tensors []Tensor) error {
	gw := NewWriter(w)
	for _, p := range kv {
		if err := gw.AddKV(p.Key, p.Value); err != nil {
			return err
		}
	}
	for _, t := range tensors {
		if err := gw.AddTensor(t.Name, t.Type, t.Dims...); err != nil {
			return err
		}
	}
	for _, t := range tensors {
		if err := gw.WriteTensorData(t.Name, t.Data); err != nil {
			return err
		}
	}
	return gw.Close()
}

// WriteFile writes a whole GGUF file to path (see Write), removing it again
// on error.
func WriteFile(path string, kv []KV, tensors []Tensor) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		err = errors.Join(err, f.Close())
		if err != nil {
			_ = os.Remove(path)
		}
	}()
	return Write(f, kv, tensors)
}
