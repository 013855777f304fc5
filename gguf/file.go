package gguf

import (
	"errors"
	"fmt"
)

// File is a parsed GGUF model: its metadata and tensor table, and access to
// the tensor data. A File from Open must be closed; its methods are safe for
// concurrent use until Close.
type File struct {
	// Version is the format version (2 or 3) of the first shard.
	Version uint32
	// Alignment is the data alignment in bytes of the first shard.
	Alignment int64
	// KV is the first shard's metadata in file order.
	KV []KV
	// Tensors lists every tensor of every shard, in file order, shard by
	// shard.
	Tensors []TensorInfo

	shards  []*shard
	kvIndex map[string]int
	tIndex  map[string]int
	closed  bool
}

func newFileFromShards(shards []*shard) (*File, error) {
	first := shards[0]
	f := &File{
		Version:   first.version,
		Alignment: first.alignment,
		KV:        first.kv,
		shards:    shards,
		kvIndex:   make(map[string]int, len(first.kv)),
		tIndex:    make(map[string]int),
	}
	for i, kv := range first.kv {
		f.kvIndex[kv.Key] = i
	}
	for si, s := range shards {
		for _, t := range s.tensors {
			if _, dup := f.tIndex[t.Name]; dup {
				return nil, &FormatError{What: fmt.Sprintf("tensor %q in one shard only, shard %d repeats it", t.Name, si), Err: ErrDuplicate}
			}
			t.Shard = si
			f.tIndex[t.Name] = len(f.Tensors)
			f.Tensors = append(f.Tensors, t)
		}
	}
	return f, nil
}

// Shards is the number of files the model is split into (1 when it is not
// split).
func (f *File) Shards() int { return len(f.shards) }

// Size is the total size in bytes of every shard.
func (f *File) Size() int64 {
	var n int64
	for _, s := range f.shards {
		n += s.size
	}
	return n
}

// DataOffset is the absolute byte offset of the data section of shard i
// (tensor offsets are relative to it).
func (f *File) DataOffset(i int) int64 { return f.shards[i].dataOffset }

// Tensor returns the description of the named tensor.
func (f *File) Tensor(name string) (TensorInfo, bool) {
	i, ok := f.tIndex[name]
	if !ok {
		return TensorInfo{}, false
	}
	return f.Tensors[i], true
}

// TensorData returns the named tensor's bytes (Size bytes, in the tensor's
// type's block layout).
//
// # Notes
//
// For a File from Open the slice is a read-only view of the file mapping:
// do not write to it, and do not use it after Close. For a File from
// NewFile it is a fresh copy read through the io.ReaderAt.
//
// Errors: ErrTensorNotFound, ErrClosed, or a read error (wrapping
// ErrTruncated when the input shrank).
func (f *File) TensorData(name string) ([]byte, error) {
	if f.closed {
		return nil, ErrClosed
	}
	i, ok := f.tIndex[name]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrTensorNotFound, name)
	}
	t := f.Tensors[i]
	s := f.shards[t.Shard]
	start := s.dataOffset + int64(t.Offset)
	if s.data != nil {
		return s.data[start : start+t.Size : start+t.Size], nil
	}
	b := make([]byte, t.Size)
	if t.Size == 0 {
		// io.ReaderAt may answer io.EOF for an empty read at the end of
		// the file (bytes.Reader does); an empty tensor has nothing to read.
		return b, nil
	}
	if _, err := s.ra.ReadAt(b, start); err != nil {
		return nil, &FormatError{Offset: start, What: fmt.Sprintf("tensor %q data", name), Err: errors.Join(ErrTruncated, err)}
	}
	return b, nil
}

// ReleasePages tells the operating system that the memory of b, a view
// TensorData returned, will not be read again soon: the whole pages of a
// file mapping that b covers leave the process's resident memory, and b
// stays valid (a later read pages it in from the file again). A caller that
// has copied a tensor into a layout of its own calls it so that the
// process does not hold both. It does nothing for bytes that are not a
// file mapping (a File from NewFile, or from Open where files are read into
// memory) and for the partial pages at b's ends.
func (f *File) ReleasePages(b []byte) {
	if f.closed || len(b) == 0 {
		return
	}
	for _, s := range f.shards {
		if s.mapped {
			releasePages(s.data, b)
		}
	}
}

// Close releases the file mappings. Views returned by TensorData are
// invalid afterwards. Close on a File from NewFile releases nothing.
func (f *File) Close() error {
	if f.closed {
		return nil
	}
	f.closed = true
	var errs []error
	for _, s := range f.shards {
		if s.close != nil {
			errs = append(errs, s.close())
		}
	}
	return errors.Join(errs...)
}
