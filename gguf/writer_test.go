package gguf

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWriterLayout checks the bytes the writer lays down: header, padding
// to the alignment, tensors at aligned offsets, zero padding.
func TestWriterLayout(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	require.NoError(t, w.AddKV("k", uint32(7)))
	require.NoError(t, w.AddTensor("a", TypeF32, 3))
	require.NoError(t, w.AddTensor("b", TypeF16, 2, 2))
	require.NoError(t, w.WriteTensorData("a", bytes.Repeat([]byte{1}, 12)))
	require.NoError(t, w.WriteTensorData("b", bytes.Repeat([]byte{2}, 8)))
	require.NoError(t, w.Close())

	want := new(raw).header(2, 1).kvU32("k", 7).
		tensor("a", TypeF32, 0, 3).tensor("b", TypeF16, 32, 2, 2).pad(32).
		bytes(bytes.Repeat([]byte{1}, 12)...).zeros(20).
		bytes(bytes.Repeat([]byte{2}, 8)...).zeros(24).b
	assert.Equal(t, want, buf.Bytes())
}

func TestWriterMisuse(t *testing.T) {
	tests := []struct {
		name string
		do   func(w *Writer) error
	}{
		{"empty key", func(w *Writer) error { return w.AddKV("", uint32(1)) }},
		{"duplicate key", func(w *Writer) error { _ = w.AddKV("a", true); return w.AddKV("a", true) }},
		{"unsupported Go type", func(w *Writer) error { return w.AddKV("a", 3) }},
		{"array type mismatch", func(w *Writer) error { return w.AddKV("a", Array{ValueInt32, []string{"x"}}) }},
		{"array of unknown", func(w *Writer) error { return w.AddKV("a", Array{ValueType(77), []uint8{}}) }},
		{"nested not []Array", func(w *Writer) error { return w.AddKV("a", Array{ValueArray, []int32{1}}) }},
		{"array holding an Array", func(w *Writer) error {
			return w.AddKV("a", Array{ValueUint8, Array{ValueUint8, []uint8{1}}})
		}},
		{"alignment not uint32", func(w *Writer) error { return w.AddKV(KeyAlignment, uint64(32)) }},
		{"alignment not power of two", func(w *Writer) error { return w.AddKV(KeyAlignment, uint32(24)) }},
		{"alignment after tensor", func(w *Writer) error {
			_ = w.AddTensor("t", TypeF32, 1)
			return w.AddKV(KeyAlignment, uint32(64))
		}},
		{"empty tensor name", func(w *Writer) error { return w.AddTensor("", TypeF32, 1) }},
		{"long tensor name", func(w *Writer) error { return w.AddTensor(string(make([]byte, 64)), TypeF32, 1) }},
		{"duplicate tensor", func(w *Writer) error { _ = w.AddTensor("t", TypeF32, 1); return w.AddTensor("t", TypeF32, 1) }},
		{"unknown type", func(w *Writer) error { return w.AddTensor("t", TensorType(4), 1) }},
		{"no dims", func(w *Writer) error { return w.AddTensor("t", TypeF32) }},
		{"five dims", func(w *Writer) error { return w.AddTensor("t", TypeF32, 1, 1, 1, 1, 1) }},
		{"negative dim", func(w *Writer) error { return w.AddTensor("t", TypeF32, 1, -1) }},
		{"partial block", func(w *Writer) error { return w.AddTensor("t", TypeQ4_K, 255) }},
		{"wrong order", func(w *Writer) error {
			_ = w.AddTensor("a", TypeF32, 1)
			_ = w.AddTensor("b", TypeF32, 1)
			return w.WriteTensorData("b", make([]byte, 4))
		}},
		{"wrong size", func(w *Writer) error {
			_ = w.AddTensor("a", TypeF32, 2)
			return w.WriteTensorData("a", make([]byte, 4))
		}},
		{"too many", func(w *Writer) error { return w.WriteTensorData("a", nil) }},
		{"kv after data", func(w *Writer) error {
			_ = w.AddTensor("a", TypeF32, 1)
			_ = w.WriteTensorData("a", make([]byte, 4))
			return w.AddKV("k", true)
		}},
		{"missing data", func(w *Writer) error { _ = w.AddTensor("a", TypeF32, 1); return w.Close() }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.do(NewWriter(&bytes.Buffer{}))
			require.ErrorIs(t, err, ErrInvalidArgument)
		})
	}
}

type failingWriter struct{ n int }

func (f *failingWriter) Write(p []byte) (int, error) {
	if f.n < len(p) {
		return 0, errors.New("disk full")
	}
	f.n -= len(p)
	return len(p), nil
}

func TestWriterPropagatesWriteErrors(t *testing.T) {
	err := Write(&failingWriter{n: 10}, sampleKV(), sampleTensors())
	require.ErrorContains(t, err, "disk full")
}

// TestWriteFileRemovesOnError: a failed WriteFile leaves no partial file.
func TestWriteFileRemovesOnError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.gguf")
	err := WriteFile(path, nil, []Tensor{{Name: "a", Type: TypeF32, Dims: []int64{1}, Data: nil}})
	require.ErrorIs(t, err, ErrInvalidArgument)
	_, statErr := os.Stat(path)
	assert.True(t, os.IsNotExist(statErr))
}

// writeSplit writes a model split into count shards, tensor i in shard i.
func writeSplit(t *testing.T, dir string, count int) string {
	t.Helper()
	prefix := filepath.Join(dir, "model")
	for i := range count {
		kv := []KV{
			{KeySplitNo, uint16(i)},
			{KeySplitCount, uint16(count)},
			{KeySplitTensorsCount, int32(count)},
		}
		if i == 0 {
			kv = append([]KV{{"general.architecture", "llama"}}, kv...)
		}
		data := bytes.Repeat([]byte{byte(i + 1)}, 4*(i+1))
		ts := []Tensor{{Name: "t" + string(rune('0'+i)), Type: TypeF32, Dims: []int64{int64(i + 1)}, Data: data}}
		require.NoError(t, WriteFile(SplitPath(prefix, i, count), kv, ts))
	}
	return SplitPath(prefix, 0, count)
}

func TestSplitFiles(t *testing.T) {
	dir := t.TempDir()
	first := writeSplit(t, dir, 3)
	assert.Equal(t, filepath.Join(dir, "model-00001-of-00003.gguf"), first)
	f, err := Open(first)
	require.NoError(t, err)
	defer f.Close()
	assert.Equal(t, 3, f.Shards())
	require.Len(t, f.Tensors, 3)
	for i, ti := range f.Tensors {
		assert.Equal(t, i, ti.Shard)
		b, err := f.TensorData(ti.Name)
		require.NoError(t, err)
		assert.Equal(t, bytes.Repeat([]byte{byte(i + 1)}, 4*(i+1)), b)
	}
	arch, err := f.String("general.architecture")
	require.NoError(t, err)
	assert.Equal(t, "llama", arch)
}

func TestSplitErrors(t *testing.T) {
	t.Run("missing shard", func(t *testing.T) {
		dir := t.TempDir()
		first := writeSplit(t, dir, 3)
		require.NoError(t, os.Remove(SplitPath(filepath.Join(dir, "model"), 2, 3)))
		_, err := Open(first)
		require.ErrorIs(t, err, os.ErrNotExist)
		assert.Contains(t, err.Error(), "model-00003-of-00003.gguf")
	})
	t.Run("not the first shard", func(t *testing.T) {
		dir := t.TempDir()
		writeSplit(t, dir, 2)
		_, err := Open(SplitPath(filepath.Join(dir, "model"), 1, 2))
		require.ErrorIs(t, err, ErrSplit)
	})
	t.Run("renamed first shard", func(t *testing.T) {
		dir := t.TempDir()
		first := writeSplit(t, dir, 2)
		renamed := filepath.Join(dir, "model.gguf")
		require.NoError(t, os.Rename(first, renamed))
		_, err := Open(renamed)
		require.ErrorIs(t, err, ErrSplit)
	})
	t.Run("shard numbered wrong", func(t *testing.T) {
		dir := t.TempDir()
		first := writeSplit(t, dir, 2)
		second := SplitPath(filepath.Join(dir, "model"), 1, 2)
		require.NoError(t, WriteFile(second, []KV{{KeySplitNo, uint16(0)}, {KeySplitCount, uint16(2)}}, nil))
		_, err := Open(first)
		require.ErrorIs(t, err, ErrSplit)
	})
	t.Run("tensor count disagrees", func(t *testing.T) {
		dir := t.TempDir()
		first := writeSplit(t, dir, 2)
		second := SplitPath(filepath.Join(dir, "model"), 1, 2)
		require.NoError(t, WriteFile(second, []KV{{KeySplitNo, uint16(1)}, {KeySplitCount, uint16(2)}}, nil))
		_, err := Open(first)
		require.ErrorIs(t, err, ErrSplit)
	})
	t.Run("tensor in two shards", func(t *testing.T) {
		dir := t.TempDir()
		first := writeSplit(t, dir, 2)
		second := SplitPath(filepath.Join(dir, "model"), 1, 2)
		require.NoError(t, WriteFile(second, []KV{{KeySplitNo, uint16(1)}, {KeySplitCount, uint16(2)}},
			[]Tensor{{Name: "t0", Type: TypeF32, Dims: []int64{1}, Data: make([]byte, 4)}}))
		_, err := Open(first)
		require.ErrorIs(t, err, ErrDuplicate)
	})
}

func TestTensorTypes(t *testing.T) {
	tests := []struct {
		typ               TensorType
		id                uint32
		name              string
		block, blockBytes int
	}{
		{TypeF32, 0, "F32", 1, 4},
		{TypeF16, 1, "F16", 1, 2},
		{TypeQ4_0, 2, "Q4_0", 32, 18},
		{TypeQ4_1, 3, "Q4_1", 32, 20},
		{TypeQ5_0, 6, "Q5_0", 32, 22},
		{TypeQ5_1, 7, "Q5_1", 32, 24},
		{TypeQ8_0, 8, "Q8_0", 32, 34},
		{TypeQ8_1, 9, "Q8_1", 32, 36},
		{TypeQ2_K, 10, "Q2_K", 256, 84},
		{TypeQ3_K, 11, "Q3_K", 256, 110},
		{TypeQ4_K, 12, "Q4_K", 256, 144},
		{TypeQ5_K, 13, "Q5_K", 256, 176},
		{TypeQ6_K, 14, "Q6_K", 256, 210},
		{TypeQ8_K, 15, "Q8_K", 256, 292},
		{TypeIQ4_NL, 20, "IQ4_NL", 32, 18},
		{TypeBF16, 30, "BF16", 1, 2},
		{TensorType(4), 4, "TensorType(4)", 0, 0},
		{TensorType(43), 43, "TensorType(43)", 0, 0},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.id, uint32(tc.typ))
		assert.Equal(t, tc.name, tc.typ.String())
		assert.Equal(t, tc.block, tc.typ.BlockSize(), tc.name)
		assert.Equal(t, tc.blockBytes, tc.typ.TypeSize(), tc.name)
		assert.Equal(t, tc.block != 0, tc.typ.Known())
		if tc.block != 0 {
			back, ok := TensorTypeByName(tc.name)
			assert.True(t, ok)
			assert.Equal(t, tc.typ, back)
		}
	}
	n, ok := TypeQ4_K.RowSize(512)
	assert.True(t, ok)
	assert.Equal(t, int64(288), n)
	_, ok = TypeQ4_K.RowSize(100)
	assert.False(t, ok)
}
