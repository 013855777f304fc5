package quantize

import (
	"bytes"
	"fmt"
	"io"

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
	md, err := src.metadata()
	if err != nil {
		return Report{}, err
	}
	return write(w, md, src.KV, src.Tensors, func(p TensorPlan) ([]byte, error) { return src.Data(p.Name) }, opts)
}

// metadata is src.KV as a metadata-only gguf.File, so that the rules read
// it through gguf's own accessors (the integer widening of Uint32
// included). The KV list is written to the output as it is, so a list
// gguf.Write refuses is an error either way.
func (src Source) metadata() (*gguf.File, error) {
	var buf bytes.Buffer
	if err := gguf.Write(&buf, src.KV, nil); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMetadata, err)
	}
	f, err := gguf.NewFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMetadata, err)
	}
	return f, nil
}
