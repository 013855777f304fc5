package gguf

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// writeBig writes a file with one 256 KiB F32 tensor of random values and
// returns its path and the tensor's bytes.
func writeBig(t *testing.T) (string, []byte) {
	t.Helper()
	r := rand.New(rand.NewPCG(3, 3))
	data := make([]byte, 256<<10)
	for i := 0; i < len(data); i += 4 {
		binary.LittleEndian.PutUint32(data[i:], r.Uint32())
	}
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, nil, []Tensor{{Name: "big", Type: TypeF32, Dims: []int64{int64(len(data) / 4)}, Data: data}}))
	path := filepath.Join(t.TempDir(), "big.gguf")
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
	return path, data
}

// ReleasePages leaves every view readable with the same bytes, whether the
// file is mapped (Open) or in memory (NewFile, where it must not touch the
// bytes at all), and ignores memory that is not the file's.
func TestReleasePages(t *testing.T) {
	path, want := writeBig(t)
	f, err := Open(path)
	require.NoError(t, err)
	defer f.Close()
	got, err := f.TensorData("big")
	require.NoError(t, err)
	require.Equal(t, want, got)
	f.ReleasePages(got)
	f.ReleasePages(got[1:3]) // less than a page: nothing
	require.Equal(t, want, got, "a released view reads the file's bytes again")

	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	mem, err := NewFile(bytes.NewReader(raw), int64(len(raw)))
	require.NoError(t, err)
	m, err := mem.TensorData("big")
	require.NoError(t, err)
	mem.ReleasePages(m)
	require.Equal(t, want, m, "a File read into memory is left alone")

	heap := bytes.Clone(want)
	f.ReleasePages(heap) // not the mapping's memory
	require.Equal(t, want, heap)
}
