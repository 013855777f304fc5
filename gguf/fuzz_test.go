package gguf

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// fuzzSeeds are the inputs the committed corpus (testdata/fuzz/FuzzNewFile)
// starts from: the sample file, a vocab-like file, a tensor-only file and
// a few broken ones.
func fuzzSeeds(t testing.TB) [][]byte {
	_, sample := writeSample(t)
	var vocab bytes.Buffer
	require.NoError(t, Write(&vocab, []KV{
		{"tokenizer.ggml.model", "llama"},
		{"tokenizer.ggml.tokens", []string{"<unk>", "<s>", "</s>", "▁a"}},
		{"tokenizer.ggml.scores", []float32{0, 0, 0, -1}},
		{"tokenizer.ggml.token_type", []int32{2, 3, 3, 1}},
	}, nil))
	var tensors bytes.Buffer
	require.NoError(t, Write(&tensors, []KV{{KeyAlignment, uint32(16)}}, []Tensor{
		{Name: "a", Type: TypeF32, Dims: []int64{2}, Data: make([]byte, 8)},
		{Name: "b", Type: TypeQ8_0, Dims: []int64{32}, Data: make([]byte, 34)},
	}))
	return [][]byte{
		sample,
		vocab.Bytes(),
		tensors.Bytes(),
		new(raw).header(0, 0).b,
		new(raw).header(1, 0).tensor("t", TypeF32, 0, 4).pad(32).zeros(16).b,
		new(raw).header(0, 1).str("k").u32(9).u32(9).u64(1).u32(8).u64(1).str("x").b,
		[]byte("GGUF"),
	}
}

// FuzzNewFile: any input either parses, with every tensor's data readable
// and of its stated size, or fails with a *FormatError; it never panics.
func FuzzNewFile(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		gf, err := NewFile(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("error is not a *FormatError: %v", err)
			}
			return
		}
		for _, ti := range gf.Tensors {
			b, err := gf.TensorData(ti.Name)
			if err != nil {
				t.Fatalf("tensor %q listed but unreadable: %v", ti.Name, err)
			}
			if int64(len(b)) != ti.Size {
				t.Fatalf("tensor %q: %d bytes, want %d", ti.Name, len(b), ti.Size)
			}
		}
		for _, kv := range gf.KV {
			_, _ = gf.String(kv.Key)
			_, _ = gf.Uint32(kv.Key)
			_, _ = gf.Int32s(kv.Key)
		}
	})
}

// TestWriteFuzzCorpus regenerates testdata/fuzz/{FuzzNewFile,FuzzRewrite}
// from fuzzSeeds:
//
//	GGUF_WRITE_CORPUS=1 go test -run TestWriteFuzzCorpus ./gguf
func TestWriteFuzzCorpus(t *testing.T) {
	if os.Getenv("GGUF_WRITE_CORPUS") != "1" {
		t.Skip("set GGUF_WRITE_CORPUS=1 to regenerate the seed corpus")
	}
	for _, target := range []string{"FuzzNewFile", "FuzzRewrite"} {
		dir := filepath.Join("testdata", "fuzz", target)
		require.NoError(t, os.MkdirAll(dir, 0o755))
		for i, s := range fuzzSeeds(t) {
			body := "go test fuzz v1\n[]byte(" + strconv.Quote(string(s)) + ")\n"
			require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("seed-%02d", i)), []byte(body), 0o644))
		}
	}
}

// FuzzRewrite: a file that parses, written back with Writer, parses to the
// same metadata and tensors (when the writer accepts it: it refuses tensor
// names longer than ggml allows).
func FuzzRewrite(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		gf, err := NewFile(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		var tensors []Tensor
		for _, ti := range gf.Tensors {
			b, err := gf.TensorData(ti.Name)
			if err != nil {
				t.Fatal(err)
			}
			tensors = append(tensors, Tensor{Name: ti.Name, Type: ti.Type, Dims: ti.Dims, Data: b})
		}
		var buf bytes.Buffer
		if err := Write(&buf, gf.KV, tensors); err != nil {
			if !errors.Is(err, ErrInvalidArgument) {
				t.Fatalf("write: %v", err)
			}
			return
		}
		again, err := NewFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
		if err != nil {
			t.Fatalf("reparse: %v", err)
		}
		if !equalKV(gf.KV, again.KV) {
			t.Fatalf("metadata changed:\n%#v\n%#v", gf.KV, again.KV)
		}
		if len(again.Tensors) != len(tensors) {
			t.Fatalf("%d tensors, want %d", len(again.Tensors), len(tensors))
		}
		for i, ti := range again.Tensors {
			w := tensors[i]
			b, _ := again.TensorData(ti.Name)
			if ti.Name != w.Name || ti.Type != w.Type || fmt.Sprint(ti.Dims) != fmt.Sprint(w.Dims) || !bytes.Equal(b, w.Data) {
				t.Fatalf("tensor %d changed: %+v", i, ti)
			}
		}
	})
}

// equalKV compares metadata, treating NaN floats as equal to themselves.
func equalKV(a, b []KV) bool {
	return fmt.Sprintf("%#v", a) == fmt.Sprintf("%#v", b)
}
