package quantize

import (
	"fmt"
	"io"
	"math"

	"github.com/realizar-host/realizar-host/gguf"
)

// Source is a model to quantize that is not a file: a generator's tensors,
// produced one at a time, so that a quantized model is written without its
// float version ever being stored (fixture.GenerateQuantized writes a
// 7B-shaped Q4_K_M file this way instead of a 27 GB F32 one).
type Source struct {
	// KV is the metadata in file order, as a gguf.File's: the values of
	// the keys the rules read (general.architecture, <arch>.block_count,
	// head counts, expert_count) are a string and unsigned or signed Go
	// integers.
	KV []gguf.KV
	// Tensors is the tensor table: each tensor's Name, Dims (ggml order)
	// and Type (F32, F16 or BF16 for a tensor that changes type); Offset,
	// Size and Shard are not read.
	Tensors []gguf.TensorInfo
	// Data returns the bytes of the named tensor in its Type (rows ×
	// Type.RowSize(Dims[0]) bytes). WriteSource calls it once per tensor,
	// in output order (PlanSource's), and does not use the slice after the
	// next call. Its error is returned wrapped in a *TensorError.
	Data func(name string) ([]byte, error)
}

// WriteSource quantizes src into w as Write does a file: the same rules,
// metadata and tensor order, so the bytes equal those of Write on a file
// with src's metadata, tensors and data.
//
// Errors: as Write, and src.Data's (in a *TensorError).
func WriteSource(w io.Writer, src Source, opts Options) (Report, error) {
	return write(w, kvList(src.KV), src.KV, src.Tensors, func(p TensorPlan) ([]byte, error) { return src.Data(p.Name) }, opts)
}

// kvList looks up a Source's metadata for the rules (the accessors of
// gguf.File they use, over a slice).
type kvList []gguf.KV

func (l kvList) lookup(key, want string) (any, error) {
	for _, kv := range l {
		if kv.Key == key {
			return kv.Value, nil
		}
	}
	return nil, &gguf.KeyError{Key: key, Want: want, Err: gguf.ErrKeyNotFound}
}

func (l kvList) String(key string) (string, error) {
	v, err := l.lookup(key, "string")
	if err != nil {
		return "", err
	}
	s, ok := v.(string)
	if !ok {
		return "", &gguf.KeyError{Key: key, Want: "string", Got: fmt.Sprintf("%T", v), Err: gguf.ErrTypeMismatch}
	}
	return s, nil
}

func (l kvList) Uint32(key string) (uint32, error) {
	v, err := l.lookup(key, "uint32")
	if err != nil {
		return 0, err
	}
	var n int64 = -1
	switch x := v.(type) {
	case uint8:
		n = int64(x)
	case uint16:
		n = int64(x)
	case uint32:
		n = int64(x)
	case uint64:
		if x <= math.MaxUint32 {
			n = int64(x)
		}
	case int8:
		n = int64(x)
	case int16:
		n = int64(x)
	case int32:
		n = int64(x)
	case int64:
		n = x
	case int:
		n = int64(x)
	}
	if n < 0 || n > math.MaxUint32 {
		return 0, &gguf.KeyError{Key: key, Want: "uint32", Got: fmt.Sprintf("%T", v), Err: gguf.ErrTypeMismatch}
	}
	return uint32(n), nil
}
