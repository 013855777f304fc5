package ref

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"unsafe"

	"github.com/jupiterrider/ffi"
)

// ErrBadFile reports a GGUF file ggml's reader refused.
var ErrBadFile = errors.New("ggml's gguf reader refused the file")

// GGUFFile is a GGUF file's header as ggml's gguf reader (gguf_init_from_file)
// sees it.
type GGUFFile struct {
	Version      uint32       `json:"version"`
	Alignment    int          `json:"alignment"`    // bytes
	DataOffset   int64        `json:"data_offset"`  // byte offset of the tensor data section in the file
	Architecture string       `json:"architecture"` // general.architecture, "" when absent
	KVCount      int          `json:"kv_count"`
	Tensors      []TensorInfo `json:"tensors"` // in file order
}

// TensorInfo is one tensor of a GGUF file.
type TensorInfo struct {
	Name   string  `json:"name"`
	Type   uint32  `json:"type"`   // ggml type id
	Dims   []int64 `json:"dims"`   // ne: Dims[0] is the row length; trailing 1s trimmed, at least one entry
	Offset int64   `json:"offset"` // byte offset in the file (DataOffset + the recorded offset)
	Size   int64   `json:"size"`   // bytes
}

// Histogram counts f's tensors by ggml type name ("q4_K": 29 ...).
func (f *GGUFFile) Histogram(l *Lib) map[string]int {
	h := map[string]int{}
	for _, t := range f.Tensors {
		name := fmt.Sprintf("type%d", t.Type)
		if info, err := l.TypeInfo(t.Type); err == nil {
			name = info.Name
		}
		h[name]++
	}
	return h
}

// TypeIDs returns the distinct type ids of f's tensors, ascending.
func (f *GGUFFile) TypeIDs() []uint32 {
	seen := map[uint32]bool{}
	var ids []uint32
	for _, t := range f.Tensors {
		if !seen[t.Type] {
			seen[t.Type] = true
			ids = append(ids, t.Type)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

// ggufFuncs are ggml's gguf reader symbols (libggml-base).
type ggufFuncs struct {
	initFromFile, free                                   ffi.Fun
	version, alignment, dataOffset, nKV, nTensors        ffi.Fun
	findKey, kvType, valStr                              ffi.Fun
	tensorName, tensorType, tensorOffset, tensorSize, ne ffi.Fun
}

// ffiTypeGGUFInitParams is struct gguf_init_params { bool no_alloc; struct ggml_context ** ctx; }.
var ffiTypeGGUFInitParams = ffi.NewType(&ffi.TypeUint8, &ffi.TypePointer)

type cGGUFInitParams struct {
	noAlloc bool
	ctx     unsafe.Pointer
}

const ggufTypeString = 8 // enum gguf_type GGUF_TYPE_STRING

func (g *ggufFuncs) bind(lib ffi.Lib) error {
	ctx, id := &ffi.TypePointer, &ffi.TypeSint64
	for _, b := range []struct {
		fn   *ffi.Fun
		name string
		ret  *ffi.Type
		args []*ffi.Type
	}{
		{&g.initFromFile, "gguf_init_from_file", &ffi.TypePointer, []*ffi.Type{&ffi.TypePointer, &ffiTypeGGUFInitParams}},
		{&g.free, "gguf_free", &ffi.TypeVoid, []*ffi.Type{ctx}},
		{&g.version, "gguf_get_version", &ffi.TypeUint32, []*ffi.Type{ctx}},
		{&g.alignment, "gguf_get_alignment", &ffi.TypeUint64, []*ffi.Type{ctx}},
		{&g.dataOffset, "gguf_get_data_offset", &ffi.TypeUint64, []*ffi.Type{ctx}},
		{&g.nKV, "gguf_get_n_kv", &ffi.TypeSint64, []*ffi.Type{ctx}},
		{&g.nTensors, "gguf_get_n_tensors", &ffi.TypeSint64, []*ffi.Type{ctx}},
		{&g.findKey, "gguf_find_key", &ffi.TypeSint64, []*ffi.Type{ctx, &ffi.TypePointer}},
		{&g.kvType, "gguf_get_kv_type", &ffi.TypeSint32, []*ffi.Type{ctx, id}},
		{&g.valStr, "gguf_get_val_str", &ffi.TypePointer, []*ffi.Type{ctx, id}},
		{&g.tensorName, "gguf_get_tensor_name", &ffi.TypePointer, []*ffi.Type{ctx, id}},
		{&g.tensorType, "gguf_get_tensor_type", &ffi.TypeSint32, []*ffi.Type{ctx, id}},
		{&g.tensorOffset, "gguf_get_tensor_offset", &ffi.TypeUint64, []*ffi.Type{ctx, id}},
		{&g.tensorSize, "gguf_get_tensor_size", &ffi.TypeUint64, []*ffi.Type{ctx, id}},
		{&g.ne, "gguf_get_tensor_ne", &ffi.TypePointer, []*ffi.Type{ctx, id}},
	} {
		f, err := prep(lib, b.name, b.ret, b.args...)
		if err != nil {
			return fmt.Errorf("%s: %w", b.name, err)
		}
		*b.fn = f
	}
	return nil
}

// ReadGGUF reads the header and tensor table of the GGUF file at path with
// ggml's own reader (gguf_init_from_file, no tensor data loaded). A file the
// reader refuses gives an error wrapping [ErrBadFile].
func (l *Lib) ReadGGUF(path string) (*GGUFFile, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, err
	}
	g := &l.ggml.gguf
	name := append([]byte(path), 0)
	np := unsafe.Pointer(&name[0])
	params := cGGUFInitParams{noAlloc: true}
	var ctx unsafe.Pointer
	g.initFromFile.Call(&ctx, &np, &params)
	if ctx == nil {
		return nil, fmt.Errorf("%w: %s", ErrBadFile, path)
	}
	defer g.free.Call(nil, &ctx)

	var u32 ffi.Arg
	var u64 uint64
	var i64 int64
	f := &GGUFFile{}
	g.version.Call(&u32, &ctx)
	f.Version = uint32(u32)
	g.alignment.Call(&u64, &ctx)
	f.Alignment = int(u64)
	g.dataOffset.Call(&u64, &ctx)
	f.DataOffset = int64(u64)
	g.nKV.Call(&i64, &ctx)
	f.KVCount = int(i64)
	f.Architecture = g.stringValue(ctx, "general.architecture")

	var n int64
	g.nTensors.Call(&n, &ctx)
	f.Tensors = make([]TensorInfo, 0, n)
	for id := int64(0); id < n; id++ {
		var namePtr *byte
		var typ ffi.Arg
		var off, size uint64
		var ne *[4]int64
		g.tensorName.Call(&namePtr, &ctx, &id)
		g.tensorType.Call(&typ, &ctx, &id)
		g.tensorOffset.Call(&off, &ctx, &id)
		g.tensorSize.Call(&size, &ctx, &id)
		g.ne.Call(&ne, &ctx, &id)
		dims := append([]int64(nil), ne[:]...)
		for len(dims) > 1 && dims[len(dims)-1] == 1 {
			dims = dims[:len(dims)-1]
		}
		f.Tensors = append(f.Tensors, TensorInfo{
			Name:   cString(namePtr),
			Type:   uint32(typ),
			Dims:   dims,
			Offset: f.DataOffset + int64(off),
			Size:   int64(size),
		})
	}
	return f, nil
}

// stringValue returns the string value of key, or "" when absent or not a string.
func (g *ggufFuncs) stringValue(ctx unsafe.Pointer, key string) string {
	k := append([]byte(key), 0)
	kp := unsafe.Pointer(&k[0])
	var id int64
	g.findKey.Call(&id, &ctx, &kp)
	if id < 0 {
		return ""
	}
	var typ ffi.Arg
	g.kvType.Call(&typ, &ctx, &id)
	if int32(typ) != ggufTypeString {
		return ""
	}
	var s *byte
	g.valStr.Call(&s, &ctx, &id)
	return cString(s)
}
