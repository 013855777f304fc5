package host

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParseConfigValues: config_get answers a string decoded and every
// other value, null included, as compact JSON text (ABI §7).
func TestParseConfigValues(t *testing.T) {
	raw := `{"s": "a\"b", "n": 0.8, "t": true, "z": null, "a": [1, 2], "o": {"k": 1}, "e": ""}`
	_, values, err := parseConfig([]byte(raw), 1<<10)
	require.NoError(t, err)
	for key, want := range map[string]string{
		"s": `a"b`, "n": "0.8", "t": "true", "z": "null", "a": "[1,2]", "o": `{"k":1}`, "e": "",
	} {
		v, ok := values[key]
		require.True(t, ok, key)
		assert.Equal(t, want, string(v), key)
	}
	_, missing := values["absent"]
	assert.False(t, missing)
}
