package gguf

import (
	"fmt"
	"io"
	"math"
	"math/bits"
	"sort"
)

// Magic is the four bytes every GGUF file starts with.
const Magic = "GGUF"

// DefaultAlignment is the data alignment in bytes when a file has no
// general.alignment key.
const DefaultAlignment = 32

// KeyAlignment is the metadata key that sets the alignment (a uint32 power
// of two).
const KeyAlignment = "general.alignment"

// MaxDims is the largest number of dims a tensor may have (ggml's limit).
const MaxDims = 4

// TensorInfo describes one tensor.
type TensorInfo struct {
	// Name is the tensor's name ("blk.0.attn_q.weight").
	Name string
	// Dims are the element counts per dimension in ggml order: Dims[0] is
	// the row length (ne[0]). 1 to MaxDims entries, each ≥ 0.
	Dims []int64
	// Type is the element type.
	Type TensorType
	// Offset is where the data starts, in bytes from the start of its
	// shard's data section; a multiple of the alignment.
	Offset uint64
	// Size is the data's length in bytes.
	Size int64
	// Shard is the index of the split file holding the data (0 when the
	// model is one file).
	Shard int
}

// Elements is the number of elements (the product of Dims).
func (t TensorInfo) Elements() int64 {
	n := int64(1)
	for _, d := range t.Dims {
		n *= d
	}
	return n
}

// shard is one parsed GGUF file (one piece of a split model).
type shard struct {
	version    uint32
	kv         []KV
	tensors    []TensorInfo
	alignment  int64
	dataOffset int64 // absolute offset of the data section
	size       int64
	ra         io.ReaderAt
	data       []byte       // the whole file when mapped or read; nil otherwise
	close      func() error // releases data; nil when nothing to release
	mapped     bool         // data is a file mapping (mapFile), not memory of ours
}

// NewFile parses a GGUF file of size bytes read through r.
//
// The returned File's TensorData reads a copy of the tensor's bytes through
// r, which must stay readable until the File is no longer used. Only r's
// own tensors are listed: a split model's other shards are not loaded (use
// Open for that).
//
// Errors: a *FormatError wrapping one of the sentinels for malformed input.
func NewFile(r io.ReaderAt, size int64) (*File, error) {
	s, err := parseShard(r, size)
	if err != nil {
		return nil, err
	}
	return newFileFromShards([]*shard{s})
}

// parseShard reads the header, metadata and tensor infos of one file and
// checks every tensor's extent against the file.
func parseShard(r io.ReaderAt, size int64) (*shard, error) {
	d := newDecoder(r, size)
	magic, err := d.fixed(4, "magic "+Magic)
	if err != nil {
		return nil, err
	}
	if string(magic) != Magic {
		return nil, d.fail(0, "magic "+Magic, ErrBadMagic)
	}
	version, err := d.u32("version")
	if err != nil {
		return nil, err
	}
	if version != 2 && version != 3 {
		what := "version 2 or 3"
		if version == 1 {
			what += " (version 1 uses 32-bit counts)"
		} else if bits.ReverseBytes32(version) == 2 || bits.ReverseBytes32(version) == 3 {
			what += " (this is a big-endian file)"
		}
		return nil, d.fail(4, fmt.Sprintf("%s, found %d", what, version), ErrUnsupportedVersion)
	}
	nTensors, err := d.u64("tensor count")
	if err != nil {
		return nil, err
	}
	nKV, err := d.u64("metadata count")
	if err != nil {
		return nil, err
	}
	// A key-value pair takes at least 13 bytes (empty key length, type, one
	// byte of value), a tensor info at least 24 (name length, n_dims, type,
	// offset).
	if nKV > uint64(d.left()/13) {
		return nil, d.fail(16, fmt.Sprintf("metadata count %d backed by the file", nKV), ErrTruncated)
	}
	if nTensors > uint64(d.left()/24) {
		return nil, d.fail(8, fmt.Sprintf("tensor count %d backed by the file", nTensors), ErrTruncated)
	}

	s := &shard{version: version, size: size, ra: r, alignment: DefaultAlignment}
	if err := s.readKV(d, nKV); err != nil {
		return nil, err
	}
	infoOffsets, err := s.readTensorInfos(d, nTensors)
	if err != nil {
		return nil, err
	}
	s.dataOffset = d.off
	if nTensors > 0 {
		pad := (s.alignment - d.off%s.alignment) % s.alignment
		if pad > d.left() {
			return nil, d.fail(d.off, "padding before the data section", ErrTruncated)
		}
		s.dataOffset += pad
	}
	if err := s.checkExtents(infoOffsets); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *shard) readKV(d *decoder, n uint64) error {
	seen := make(map[string]bool)
	for i := uint64(0); i < n; i++ {
		start := d.off
		key, err := d.str("metadata key")
		if err != nil {
			return err
		}
		if key == "" {
			return d.fail(start, "non-empty metadata key", ErrMalformed)
		}
		if seen[key] {
			return d.fail(start, fmt.Sprintf("unique metadata key, %q repeats", key), ErrDuplicate)
		}
		seen[key] = true
		tOff := d.off
		t, err := d.u32(fmt.Sprintf("type of %q", key))
		if err != nil {
			return err
		}
		if !ValueType(t).Known() {
			return d.fail(tOff, fmt.Sprintf("value type of %q", key), ErrUnknownType)
		}
		v, err := d.value(ValueType(t), 0, fmt.Sprintf("value of %q", key))
		if err != nil {
			return err
		}
		if key == KeyAlignment {
			a, ok := v.(uint32)
			if !ok || a == 0 || a&(a-1) != 0 {
				return d.fail(tOff, KeyAlignment+" as a power-of-two uint32", ErrBadAlignment)
			}
			s.alignment = int64(a)
		}
		s.kv = append(s.kv, KV{Key: key, Value: v})
	}
	return nil
}

// readTensorInfos reads n tensor infos and returns the offset of each.
func (s *shard) readTensorInfos(d *decoder, n uint64) ([]int64, error) {
	var offsets []int64
	seen := make(map[string]bool)
	for i := uint64(0); i < n; i++ {
		start := d.off
		name, err := d.str("tensor name")
		if err != nil {
			return nil, err
		}
		if seen[name] {
			return nil, d.fail(start, fmt.Sprintf("unique tensor name, %q repeats", name), ErrDuplicate)
		}
		seen[name] = true
		nDims, err := d.u32(fmt.Sprintf("dim count of tensor %q", name))
		if err != nil {
			return nil, err
		}
		if nDims == 0 || nDims > MaxDims {
			return nil, d.fail(d.off-4, fmt.Sprintf("1 to %d dims for tensor %q, found %d", MaxDims, name, nDims), ErrMalformed)
		}
		dims := make([]int64, nDims)
		elems := int64(1)
		for j := range dims {
			v, err := d.u64(fmt.Sprintf("dim %d of tensor %q", j, name))
			if err != nil {
				return nil, err
			}
			if v > math.MaxInt64 {
				return nil, d.fail(d.off-8, fmt.Sprintf("non-negative dim %d of tensor %q", j, name), ErrMalformed)
			}
			dims[j] = int64(v)
			if dims[j] != 0 && elems > math.MaxInt64/dims[j] {
				return nil, d.fail(d.off-8, fmt.Sprintf("element count of tensor %q within int64", name), ErrMalformed)
			}
			elems *= dims[j]
		}
		typ, err := d.u32(fmt.Sprintf("type of tensor %q", name))
		if err != nil {
			return nil, err
		}
		tt := TensorType(typ)
		if !tt.Known() {
			return nil, d.fail(d.off-4, fmt.Sprintf("ggml type of tensor %q, found %d", name, typ), ErrUnknownType)
		}
		rowBytes, ok := tt.RowSize(dims[0])
		if !ok {
			return nil, d.fail(start, fmt.Sprintf("row length of tensor %q (%d) a multiple of %s's block size %d",
				name, dims[0], tt, tt.BlockSize()), ErrMalformed)
		}
		size := int64(0)
		if dims[0] != 0 {
			rows := elems / dims[0]
			if rows != 0 && rowBytes > math.MaxInt64/rows {
				return nil, d.fail(start, fmt.Sprintf("byte size of tensor %q within int64", name), ErrMalformed)
			}
			size = rows * rowBytes
		}
		off, err := d.u64(fmt.Sprintf("data offset of tensor %q", name))
		if err != nil {
			return nil, err
		}
		s.tensors = append(s.tensors, TensorInfo{Name: name, Dims: dims, Type: tt, Offset: off, Size: size})
		offsets = append(offsets, start)
	}
	return offsets, nil
}

// checkExtents rejects tensors whose data is misaligned, lies outside the
// file, or overlaps another's.
func (s *shard) checkExtents(infoOffsets []int64) error {
	room := uint64(s.size - s.dataOffset)
	for i, t := range s.tensors {
		if t.Offset%uint64(s.alignment) != 0 {
			return &FormatError{Offset: infoOffsets[i], What: fmt.Sprintf("offset %d of tensor %q a multiple of the alignment %d",
				t.Offset, t.Name, s.alignment), Err: ErrBadAlignment}
		}
		if t.Offset > room || uint64(t.Size) > room-t.Offset {
			return &FormatError{Offset: infoOffsets[i], What: fmt.Sprintf("tensor %q data [%d, +%d) within the %d bytes of the data section",
				t.Name, t.Offset, t.Size, room), Err: ErrOutOfBounds}
		}
	}
	order := make([]int, len(s.tensors))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return s.tensors[order[a]].Offset < s.tensors[order[b]].Offset })
	var end uint64
	prev := -1
	for _, i := range order {
		t := s.tensors[i]
		if t.Size == 0 {
			continue
		}
		if prev >= 0 && t.Offset < end {
			return &FormatError{Offset: infoOffsets[i], What: fmt.Sprintf("tensor %q data [%d, +%d) apart from tensor %q's",
				t.Name, t.Offset, t.Size, s.tensors[prev].Name), Err: ErrOverlap}
		}
		end = t.Offset + uint64(t.Size)
		prev = i
	}
	return nil
}
