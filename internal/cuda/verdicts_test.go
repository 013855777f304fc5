package cuda

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestVerdictKey(t *testing.T) {
	k := verdictKey{fileSHA256: "ab", device: "NVIDIA H200", kernelHash: "cd"}
	assert.Equal(t, "ab|NVIDIA H200|cd", k.String())
	for _, tc := range []struct {
		k     verdictKey
		valid bool
	}{
		{k, true},
		{verdictKey{device: "d", kernelHash: "h"}, false},
		{verdictKey{fileSHA256: "f", kernelHash: "h"}, false},
		{verdictKey{fileSHA256: "f", device: "d"}, false},
	} {
		assert.Equal(t, tc.valid, tc.k.valid(), tc.k.String())
	}
	// Each part separates verdicts.
	c, err := OpenVerdictCache("")
	require.NoError(t, err)
	require.NoError(t, c.put(k, Verdict{OK: true, Positions: 64}))
	for _, other := range []verdictKey{
		{fileSHA256: "ab2", device: k.device, kernelHash: k.kernelHash},
		{fileSHA256: k.fileSHA256, device: "NVIDIA A100", kernelHash: k.kernelHash},
		{fileSHA256: k.fileSHA256, device: k.device, kernelHash: "ce"},
	} {
		_, ok := c.get(other)
		assert.False(t, ok, other.String())
	}
	v, ok := c.get(k)
	assert.True(t, ok)
	assert.True(t, v.OK)
}

func TestVerdictCacheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "verdicts.json")
	c, err := OpenVerdictCache(path)
	require.NoError(t, err, "a missing file is an empty cache")
	k := verdictKey{fileSHA256: "f", device: "d", kernelHash: kernelHash()}
	bad := Verdict{Reason: "position 3: cosine 0.50000 < 0.95", MinCos: 0.5, WorstPos: 3, Positions: 64}
	require.NoError(t, c.put(k, bad))
	require.NoError(t, c.put(verdictKey{device: "d", kernelHash: "h"}, Verdict{OK: true}), "an incomplete key is ignored")

	again, err := OpenVerdictCache(path)
	require.NoError(t, err)
	got, ok := again.get(k)
	require.True(t, ok)
	assert.Equal(t, bad, got)
	assert.Len(t, again.m, 1)

	require.NoError(t, os.WriteFile(path, []byte("{not json"), 0o644))
	_, err = OpenVerdictCache(path)
	assert.ErrorContains(t, err, path)
}

func TestFileSHA256(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x")
	require.NoError(t, os.WriteFile(path, []byte("abc"), 0o644))
	h, err := FileSHA256(path)
	require.NoError(t, err)
	assert.Equal(t, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", h)
	_, err = FileSHA256(filepath.Join(t.TempDir(), "missing"))
	assert.Error(t, err)
}
