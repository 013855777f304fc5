package gguf

import (
	"bytes"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// normalized returns kv with plain slices turned into Array, as the reader
// returns them.
func normalized(kv []KV) []KV {
	out := make([]KV, len(kv))
	for i, p := range kv {
		if a, ok := asArray(p.Value); ok {
			p.Value = a
		}
		out[i] = p
	}
	return out
}

func TestRoundTrip(t *testing.T) {
	path, data := writeSample(t)
	opened, err := Open(path)
	require.NoError(t, err)
	defer opened.Close()
	parsed, err := NewFile(bytes.NewReader(data), int64(len(data)))
	require.NoError(t, err)

	for name, f := range map[string]*File{"Open": opened, "NewFile": parsed} {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, uint32(3), f.Version)
			assert.Equal(t, int64(64), f.Alignment)
			assert.Equal(t, normalized(sampleKV()), f.KV)
			assert.Equal(t, 1, f.Shards())
			assert.Equal(t, int64(len(data)), f.Size())
			assert.Zero(t, f.DataOffset(0)%64)
			want := sampleTensors()
			require.Len(t, f.Tensors, len(want))
			for i, w := range want {
				got := f.Tensors[i]
				assert.Equal(t, w.Name, got.Name)
				assert.Equal(t, w.Dims, got.Dims)
				assert.Equal(t, w.Type, got.Type)
				assert.Equal(t, int64(len(w.Data)), got.Size)
				assert.Zero(t, got.Offset%64, "offset of %s", w.Name)
				b, err := f.TensorData(w.Name)
				require.NoError(t, err)
				assert.Equal(t, w.Data, b)
				info, ok := f.Tensor(w.Name)
				require.True(t, ok)
				assert.Equal(t, got, info)
			}
			_, err := f.TensorData("missing")
			assert.ErrorIs(t, err, ErrTensorNotFound)
			_, ok := f.Tensor("missing")
			assert.False(t, ok)
		})
	}
	require.NoError(t, opened.Close())
	_, err = opened.TensorData("token_embd.weight")
	assert.ErrorIs(t, err, ErrClosed)
}

func TestElements(t *testing.T) {
	assert.Equal(t, int64(24), TensorInfo{Dims: []int64{2, 3, 4}}.Elements())
	assert.Equal(t, int64(0), TensorInfo{Dims: []int64{0, 3}}.Elements())
}

func TestAccessors(t *testing.T) {
	_, data := writeSample(t)
	f, err := NewFile(bytes.NewReader(data), int64(len(data)))
	require.NoError(t, err)

	tests := []struct {
		name string
		get  func() (any, error)
		want any
		err  error // nil, ErrKeyNotFound or ErrTypeMismatch
	}{
		{"String", func() (any, error) { return f.String("str") }, "héllo", nil},
		{"String missing", func() (any, error) { return f.String("nope") }, "", ErrKeyNotFound},
		{"String of u32", func() (any, error) { return f.String("u32") }, "", ErrTypeMismatch},
		{"Bool", func() (any, error) { return f.Bool("bool") }, true, nil},
		{"Bool of u8", func() (any, error) { return f.Bool("u8") }, false, ErrTypeMismatch},
		{"Uint32", func() (any, error) { return f.Uint32("u32") }, uint32(4000000000), nil},
		{"Uint32 of u8", func() (any, error) { return f.Uint32("u8") }, uint32(200), nil},
		{"Uint32 of u16", func() (any, error) { return f.Uint32("u16") }, uint32(60000), nil},
		{"Uint32 of small u64", func() (any, error) { return f.Uint32("small.u64") }, uint32(7), nil},
		{"Uint32 of big u64", func() (any, error) { return f.Uint32("u64") }, uint32(0), ErrTypeMismatch},
		{"Uint32 of negative", func() (any, error) { return f.Uint32("neg.i8") }, uint32(0), ErrTypeMismatch},
		{"Uint32 of f32", func() (any, error) { return f.Uint32("f32") }, uint32(0), ErrTypeMismatch},
		{"Int32", func() (any, error) { return f.Int32("i32") }, int32(-2000000000), nil},
		{"Int32 of i16", func() (any, error) { return f.Int32("i16") }, int32(-30000), nil},
		{"Int32 of u32 too big", func() (any, error) { return f.Int32("u32") }, int32(0), ErrTypeMismatch},
		{"Int32 of i64", func() (any, error) { return f.Int32("i64") }, int32(0), ErrTypeMismatch},
		{"Uint64", func() (any, error) { return f.Uint64("u64") }, uint64(1) << 60, nil},
		{"Uint64 of u32", func() (any, error) { return f.Uint64("u32") }, uint64(4000000000), nil},
		{"Uint64 of negative", func() (any, error) { return f.Uint64("i64") }, uint64(0), ErrTypeMismatch},
		{"Float32", func() (any, error) { return f.Float32("f32") }, float32(1.5), nil},
		{"Float32 of exact f64", func() (any, error) { return f.Float32("exact.f64") }, float32(0.5), nil},
		{"Float32 of inexact f64", func() (any, error) { return f.Float32("f64") }, float32(0), ErrTypeMismatch},
		{"Float32 of string", func() (any, error) { return f.Float32("str") }, float32(0), ErrTypeMismatch},
		{"Strings", func() (any, error) { return f.Strings("tokens") }, []string{"<unk>", "a", "", "▁b"}, nil},
		{"Strings empty", func() (any, error) { return f.Strings("empty") }, []string{}, nil},
		{"Strings of f32s", func() (any, error) { return f.Strings("scores") }, []string(nil), ErrTypeMismatch},
		{"Strings of string", func() (any, error) { return f.Strings("str") }, []string(nil), ErrTypeMismatch},
		{"Float32s", func() (any, error) { return f.Float32s("scores") }, []float32{0, -1.5, 2}, nil},
		{"Float32s of i32s", func() (any, error) { return f.Float32s("types") }, []float32(nil), ErrTypeMismatch},
		{"Int32s", func() (any, error) { return f.Int32s("types") }, []int32{1, 2, 3}, nil},
		{"Int32s of u8s", func() (any, error) { return f.Int32s("u8s") }, []int32{1, 2, 255}, nil},
		{"Int32s of i64s", func() (any, error) { return f.Int32s("i64s") }, []int32{-5, 5}, nil},
		{"Int32s of big u64s", func() (any, error) { return f.Int32s("big.u64s") }, []int32(nil), ErrTypeMismatch},
		{"Int32s of bools", func() (any, error) { return f.Int32s("bools") }, []int32(nil), ErrTypeMismatch},
		{"Int32s of nested", func() (any, error) { return f.Int32s("nested") }, []int32(nil), ErrTypeMismatch},
		{"Int32s missing", func() (any, error) { return f.Int32s("nope") }, []int32(nil), ErrKeyNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.get()
			if tc.err == nil {
				require.NoError(t, err)
				assert.Equal(t, tc.want, got)
				return
			}
			require.ErrorIs(t, err, tc.err)
			var ke *KeyError
			require.ErrorAs(t, err, &ke)
			assert.Contains(t, err.Error(), ke.Key, "the error names the key")
			assert.Equal(t, tc.want, got, "zero value on error")
		})
	}
}

func TestMagicConstant(t *testing.T) {
	assert.Equal(t, "GGUF", Magic)
	for _, magic := range []string{"GGUG", "FUGG", "gguf", "GGML", "\x00\x00\x00\x00"} {
		var r raw
		r.bytes([]byte(magic)...).u32(3).u64(0).u64(0)
		_, err := NewFile(bytes.NewReader(r.b), int64(len(r.b)))
		require.ErrorIs(t, err, ErrBadMagic, "magic %q", magic)
		var fe *FormatError
		require.ErrorAs(t, err, &fe)
		assert.Equal(t, int64(0), fe.Offset)
	}
	var ok raw
	ok.header(0, 0)
	_, err := NewFile(bytes.NewReader(ok.b), int64(len(ok.b)))
	assert.NoError(t, err, "the real magic is accepted")
}

func TestVersions(t *testing.T) {
	for _, tc := range []struct {
		version uint32
		err     error
	}{
		{0, ErrUnsupportedVersion},
		{1, ErrUnsupportedVersion},
		{2, nil},
		{3, nil},
		{4, ErrUnsupportedVersion},
		{0x03000000, ErrUnsupportedVersion}, // big-endian v3
	} {
		var r raw
		r.magic().u32(tc.version).u64(0).u64(0)
		f, err := NewFile(bytes.NewReader(r.b), int64(len(r.b)))
		if tc.err == nil {
			require.NoError(t, err, "version %d", tc.version)
			assert.Equal(t, tc.version, f.Version)
			continue
		}
		require.ErrorIs(t, err, tc.err, "version %#x", tc.version)
		var fe *FormatError
		require.ErrorAs(t, err, &fe)
		assert.Equal(t, int64(4), fe.Offset)
	}
}

// TestTruncatedEverywhere cuts a valid file at every length: each prefix
// must fail with a *FormatError and never panic.
func TestTruncatedEverywhere(t *testing.T) {
	_, data := writeSample(t)
	for n := 0; n < len(data); n++ {
		// The last tensor's trailing padding is not needed by any tensor.
		if n >= len(data)-64 {
			break
		}
		_, err := NewFile(bytes.NewReader(data[:n]), int64(n))
		var fe *FormatError
		require.ErrorAs(t, err, &fe, "prefix of %d bytes", n)
		require.True(t, errors.Is(err, ErrTruncated) || errors.Is(err, ErrOutOfBounds),
			"prefix of %d bytes: %v", n, err)
	}
}

func TestBadInput(t *testing.T) {
	tensorFile := func(typ TensorType, off uint64, dims ...uint64) []byte {
		var r raw
		r.header(1, 0).tensor("t", typ, off, dims...).pad(32).zeros(64)
		return r.b
	}
	tests := []struct {
		name string
		data []byte
		err  error
	}{
		{"empty file", nil, ErrTruncated},
		{"huge kv count", new(raw).header(0, 1<<62).b, ErrTruncated},
		{"huge tensor count", new(raw).header(1<<62, 0).b, ErrTruncated},
		{"huge key length", new(raw).header(0, 1).u64(1 << 62).zeros(16).b, ErrTruncated},
		{"empty key", new(raw).header(0, 1).kvU32("", 1).b, ErrMalformed},
		{"duplicate key", new(raw).header(0, 2).kvU32("a", 1).kvU32("a", 2).b, ErrDuplicate},
		{"unknown value type", new(raw).header(0, 1).str("k").u32(13).u32(0).b, ErrUnknownType},
		{"unknown array element type", new(raw).header(0, 1).str("k").u32(9).u32(99).u64(0).b, ErrUnknownType},
		{"huge array count", new(raw).header(0, 1).str("k").u32(9).u32(uint32(ValueUint32)).u64(1 << 61).zeros(64).b, ErrTruncated},
		{"huge string array count", new(raw).header(0, 1).str("k").u32(9).u32(uint32(ValueString)).u64(1 << 40).zeros(64).b, ErrTruncated},
		{"nested too deep", func() []byte {
			r := new(raw).header(0, 1).str("k").u32(9)
			for range 10 {
				r.u32(uint32(ValueArray)).u64(1)
			}
			return r.u32(uint32(ValueUint8)).u64(0).b
		}(), ErrMalformed},
		{"alignment not uint32", new(raw).header(0, 1).str(KeyAlignment).u32(uint32(ValueUint64)).u64(32).b, ErrBadAlignment},
		{"alignment not power of two", new(raw).header(0, 1).kvU32(KeyAlignment, 48).b, ErrBadAlignment},
		{"alignment zero", new(raw).header(0, 1).kvU32(KeyAlignment, 0).b, ErrBadAlignment},
		{"unknown tensor type", tensorFile(4, 0, 8), ErrUnknownType},
		{"tensor type past the end", tensorFile(43, 0, 8), ErrUnknownType},
		{"no dims", tensorFile(TypeF32, 0), ErrMalformed},
		{"five dims", tensorFile(TypeF32, 0, 1, 1, 1, 1, 1), ErrMalformed},
		{"negative dim", tensorFile(TypeF32, 0, 1<<63), ErrMalformed},
		{"element count overflow", tensorFile(TypeF32, 0, 1<<32, 1<<32), ErrMalformed},
		{"byte size overflow", tensorFile(TypeF32, 0, 1<<31, 1<<31), ErrMalformed},
		{"row not whole blocks", tensorFile(TypeQ4_K, 0, 100), ErrMalformed},
		{"misaligned offset", tensorFile(TypeF32, 4, 1), ErrBadAlignment},
		{"data past the end", tensorFile(TypeF32, 0, 17), ErrOutOfBounds},
		{"offset past the end", tensorFile(TypeF32, 1<<62, 1), ErrOutOfBounds},
		{"offset near max", tensorFile(TypeF32, 1<<64-32, 1), ErrOutOfBounds},
		{"overlap", new(raw).header(2, 0).
			tensor("a", TypeF32, 0, 16).tensor("b", TypeF32, 32, 8).pad(32).zeros(128).b, ErrOverlap},
		{"same offset", new(raw).header(2, 0).
			tensor("a", TypeF32, 0, 1).tensor("b", TypeF32, 0, 1).pad(32).zeros(64).b, ErrOverlap},
		{"duplicate tensor", new(raw).header(2, 0).
			tensor("a", TypeF32, 0, 1).tensor("a", TypeF32, 32, 1).pad(32).zeros(64).b, ErrDuplicate},
		{"missing padding", new(raw).header(1, 0).tensor("a", TypeF32, 0, 0).b, ErrTruncated},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewFile(bytes.NewReader(tc.data), int64(len(tc.data)))
			require.ErrorIs(t, err, tc.err)
			var fe *FormatError
			require.ErrorAs(t, err, &fe)
			assert.NotEmpty(t, fe.What)
			assert.GreaterOrEqual(t, fe.Offset, int64(0))
			assert.LessOrEqual(t, fe.Offset, int64(len(tc.data)))
		})
	}
}

// TestZeroSizeTensorsShareOffsets: empty tensors take no room, so they may
// sit anywhere in the data section, even at another tensor's offset.
func TestZeroSizeTensorsShareOffsets(t *testing.T) {
	r := new(raw).header(3, 0).
		tensor("a", TypeF32, 0, 8).tensor("e", TypeF32, 0, 0).tensor("z", TypeF32, 32, 0).pad(32).zeros(32)
	f, err := NewFile(bytes.NewReader(r.b), int64(len(r.b)))
	require.NoError(t, err)
	b, err := f.TensorData("e")
	require.NoError(t, err)
	assert.Empty(t, b)
}

// TestVersion2 reads a version 2 file, which has the layout of version 3.
func TestVersion2(t *testing.T) {
	r := new(raw).magic().u32(2).u64(1).u64(1).kvU32("n", 5).tensor("w", TypeF32, 0, 2).pad(32)
	r.u32(0x3f800000).u32(0x40000000)
	f, err := NewFile(bytes.NewReader(r.b), int64(len(r.b)))
	require.NoError(t, err)
	assert.Equal(t, uint32(2), f.Version)
	n, err := f.Uint32("n")
	require.NoError(t, err)
	assert.Equal(t, uint32(5), n)
	b, err := f.TensorData("w")
	require.NoError(t, err)
	assert.Equal(t, []byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0x40}, b)
}

func TestOpenMissingFile(t *testing.T) {
	_, err := Open(t.TempDir() + "/absent.gguf")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "absent.gguf")
}

func TestOpenEmptyFile(t *testing.T) {
	path := t.TempDir() + "/empty.gguf"
	require.NoError(t, WriteFile(path, nil, nil))
	f, err := Open(path)
	require.NoError(t, err)
	assert.Empty(t, f.KV)
	require.NoError(t, f.Close())
}
