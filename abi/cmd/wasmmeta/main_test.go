package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/abi/wasmfile"
)

// Running wasmmeta twice (on its own output) gives the same bytes.
func TestRunIsReproducible(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.wasm")
	require.NoError(t, os.WriteFile(in, wasmfile.Magic, 0o644))
	args := []string{"-kind", "stop", "-name", "strings", "-version", "2", "-description", "stop strings"}
	out1, out2 := filepath.Join(dir, "1.wasm"), filepath.Join(dir, "2.wasm")
	require.NoError(t, run(append(args, in, out1)))
	require.NoError(t, run(append(args, out1, out2)))
	b1, err := os.ReadFile(out1)
	require.NoError(t, err)
	b2, err := os.ReadFile(out2)
	require.NoError(t, err)
	assert.Equal(t, b1, b2)
	m, err := wasmfile.Parse(b2)
	require.NoError(t, err)
	p, ok := m.CustomSection(abi.MetaSection)
	require.True(t, ok)
	assert.Equal(t, `{"abi":1,"kind":"stop","name":"strings","version":"2","description":"stop strings"}`, string(p))
}

func TestRunRefuses(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.wasm")
	require.NoError(t, os.WriteFile(in, []byte("nope"), 0o644))
	assert.Error(t, run([]string{"-kind", "stop", "-name", "x", in, filepath.Join(dir, "o")}), "not wasm")
	assert.Error(t, run([]string{"-kind", "filter", "-name", "x", in, filepath.Join(dir, "o")}), "bad kind")
	assert.Error(t, run([]string{"-kind", "stop", in}), "missing output")
}

// -abi 2 with -x keys writes them sorted after the five keys; -x on ABI 1
// metadata is refused.
func TestRunExtensionKeys(t *testing.T) {
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.wasm"), filepath.Join(dir, "out.wasm")
	require.NoError(t, os.WriteFile(in, wasmfile.Magic, 0o644))
	require.NoError(t, run([]string{"-abi", "2", "-kind", "processor", "-name", "allow", "-x", `x-tool={"v": 1}`, "-x", "x-a=true", in, out}))
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	m, err := wasmfile.Parse(b)
	require.NoError(t, err)
	p, _ := m.CustomSection(abi.MetaSection)
	assert.Equal(t, `{"abi":2,"kind":"processor","name":"allow","version":"","description":"","x-a":true,"x-tool":{"v":1}}`, string(p))
	assert.Error(t, run([]string{"-kind", "stop", "-name", "x", "-x", "x-a=1", in, out}), "x- keys on ABI 1")
	assert.Error(t, run([]string{"-abi", "2", "-kind", "stop", "-name", "x", "-x", "x-a={", in, out}), "not JSON")
}
