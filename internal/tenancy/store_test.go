package tenancy

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPluginsSurviveRestart: a second DirStore over the same directory
// still has the tenant's modules; another tenant does not see them.
func TestPluginsSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	store, err := NewDirStore(dir)
	require.NoError(t, err)
	require.NoError(t, store.Put(t.Context(), "a", SumOf([]byte("x")), []byte("x"), Quota{}))
	again, err := NewDirStore(dir)
	require.NoError(t, err)
	infos, err := again.List(t.Context(), "a")
	require.NoError(t, err)
	assert.Equal(t, []PluginInfo{{SHA256: SumOf([]byte("x")), Bytes: 1}}, infos)
	_, err = again.Get(t.Context(), "b", SumOf([]byte("x")))
	assert.ErrorIs(t, err, ErrNoPlugin)
}

// TestStoreQuota: both stores refuse a new module over the quota's count
// or bytes with ErrQuota, take one they hold already, and take a new one
// again once another is deleted.
func TestStoreQuota(t *testing.T) {
	dir, err := NewDirStore(t.TempDir())
	require.NoError(t, err)
	for name, s := range map[string]Store{"dir": dir, "mem": NewMemStore()} {
		t.Run(name, func(t *testing.T) {
			q := Quota{Plugins: 2, Bytes: 5}
			x, y, z := []byte("xx"), []byte("yy"), []byte("zzzz")
			require.NoError(t, s.Put(t.Context(), "a", SumOf(x), x, q))
			require.NoError(t, s.Put(t.Context(), "a", SumOf(y), y, q))
			require.NoError(t, s.Put(t.Context(), "a", SumOf(y), y, q), "held already")
			assert.ErrorIs(t, s.Put(t.Context(), "a", SumOf(z), z, q), ErrQuota, "a third module")
			require.NoError(t, s.Put(t.Context(), "b", SumOf(z), z, q), "b's quota is its own")
			require.NoError(t, s.Delete(t.Context(), "a", SumOf(x)))
			assert.ErrorIs(t, s.Put(t.Context(), "a", SumOf(z), z, q), ErrQuota, "6 bytes")
			w := []byte("w")
			require.NoError(t, s.Put(t.Context(), "a", SumOf(w), w, q))
			assert.ErrorIs(t, s.Delete(t.Context(), "a", SumOf(x)), ErrNoPlugin)
			infos, err := s.List(t.Context(), "a")
			require.NoError(t, err)
			assert.Len(t, infos, 2)
		})
	}
}

func TestValidSum(t *testing.T) {
	assert.True(t, ValidSum(SumOf(nil)))
	assert.False(t, ValidSum(HashKey("k")[:63]))
	assert.False(t, ValidSum("A"+SumOf(nil)[1:]), "uppercase")
}
