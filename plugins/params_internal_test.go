package plugins

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/realizar-host/realizar-host/plugins/sampling"
)

// TestConfigFieldsMatchParams: the config types' number fields are the
// number parameters of sampling.Params their plugin reads, under the same
// keys and kinds (an integer parameter an *int).
func TestConfigFieldsMatchParams(t *testing.T) {
	numbers := func(plugin string) map[string]bool { // key -> integer
		out := map[string]bool{}
		for _, p := range sampling.Of(plugin) {
			if p.Number() {
				out[p.Key] = p.Type == sampling.Int
			}
		}
		return out
	}
	kinds := func(ns []number) map[string]bool {
		out := map[string]bool{}
		for _, n := range ns {
			out[n.key] = n.i != nil
		}
		return out
	}
	var full Standard
	for _, p := range sampling.Of(sampling.Standard) {
		full.SetNumber(p.Key, 1)
	}
	assert.Equal(t, numbers(sampling.Standard), kinds(full.numbers()))
	var d DRY
	for _, p := range sampling.Of(sampling.DRY) {
		d.SetNumber(p.Key, 1)
	}
	assert.Equal(t, numbers(sampling.DRY), kinds(d.numbers()))
	var m MirostatV2
	for _, key := range []string{"temperature", "mirostat_tau", "mirostat_eta"} {
		assert.True(t, m.SetNumber(key, 1), key)
		p, ok := sampling.Lookup(key)
		assert.True(t, ok && p.Plugin == sampling.Standard, key)
	}
	assert.False(t, m.SetNumber("top_k", 1))
}
