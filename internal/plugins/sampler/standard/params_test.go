package standard

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/realizar-host/realizar-host/internal/plugins/sampling"
)

// TestFieldsMatchParams: every number parameter of the standard sampler in
// sampling.Params has a Config field of its type, and no other key has
// one; DefaultConfig is the table's defaults.
func TestFieldsMatchParams(t *testing.T) {
	var c Config
	def := DefaultConfig()
	n := 0
	for _, p := range sampling.Params {
		f64, f32, i := c.field(p.Key)
		switch {
		case p.Plugin != sampling.Standard || !p.Number():
			assert.True(t, f64 == nil && f32 == nil && i == nil, "%s has a field", p.Key)
			continue
		case p.Type == sampling.Float:
			assert.NotNil(t, f64, p.Key)
		case p.Type == sampling.Float32:
			assert.NotNil(t, f32, p.Key)
		case p.Type == sampling.Int:
			assert.NotNil(t, i, p.Key)
		}
		n++
		assert.Equal(t, p.Default, def.value(p.Key), p.Key)
	}
	assert.Equal(t, 17, n)
	assert.Equal(t, Config{Temperature: 0.8, TopK: 40, TopP: 0.95, MinP: 0.05, TypicalP: 1, RepeatPenalty: 1, RepeatLastN: 64,
		XTCThreshold: 0.1, DynatempExponent: 1, MirostatTau: 5, MirostatEta: 0.1}, DefaultConfig(), "llama.cpp's defaults")
}
