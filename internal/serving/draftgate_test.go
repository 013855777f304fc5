package serving

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// The gate fits the passes' cost line and closes drafts where the share of
// a pass its rows cost exceeds the drafts' acceptance.
func TestDraftGate(t *testing.T) {
	ms := func(x float64) time.Duration { return time.Duration(x * float64(time.Millisecond)) }
	// t(r) = 10 ms + 10 ms·r: share(1) = 0.5, share(2) = 0.67, share(8) = 0.89.
	cost := func(g *draftGate) {
		for range 40 {
			for _, r := range []int{1, 2, 4, 8, 12} {
				g.pass(r, ms(10+10*float64(r)))
			}
		}
	}
	tests := []struct {
		name              string
		passes            bool
		drafted, accepted int
		want              map[int]bool // decoding sequences → allowed
	}{
		{"nothing measured", false, 0, 0, map[int]bool{1: true, 2: true, 8: true}},
		{"passes but no drafts", true, 0, 0, map[int]bool{1: true, 8: true}},
		{"drafts but no passes", false, 100, 10, map[int]bool{1: true, 8: true}},
		{"acceptance 60%", true, 100, 60, map[int]bool{1: true, 2: false, 8: false}},
		{"acceptance 80%", true, 100, 80, map[int]bool{1: true, 2: true, 3: true, 4: false, 8: false}},
		{"acceptance 95%", true, 100, 95, map[int]bool{1: true, 8: true, 20: false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var g draftGate
			var ac acceptance
			if tt.passes {
				cost(&g)
				a, b, ok := g.fit()
				assert.True(t, ok)
				assert.InDelta(t, 0.010, a, 1e-6)
				assert.InDelta(t, 0.010, b, 1e-6)
			}
			for range 10 {
				g.verified(&ac, tt.drafted/10, tt.accepted/10)
			}
			ac.probed = true
			for decodes, want := range tt.want {
				assert.Equal(t, want, g.allow(decodes, ac, 0), "%d sequences", decodes)
			}
		})
	}
	// One row count measured: no slope, no gate.
	var g draftGate
	var ac acceptance
	for range 50 {
		g.pass(8, ms(90))
		g.verified(&ac, 10, 0)
	}
	ac.probed = true
	_, _, ok := g.fit()
	assert.False(t, ok)
	assert.True(t, g.allow(8, ac, 0))
}

// A sequence is judged by its own drafts drawn toward the pool's: its first
// span by what it would show accepted whole, then by what it showed.
func TestDraftGateSequence(t *testing.T) {
	ms := func(x float64) time.Duration { return time.Duration(x * float64(time.Millisecond)) }
	var g draftGate
	for range 40 {
		for _, r := range []int{1, 2, 4, 8, 12} {
			g.pass(r, ms(10+10*float64(r))) // share(2) = 0.67, share(3) = 0.75, share(8) = 0.89
		}
	}
	var lookups acceptance
	for range 20 {
		g.verified(&lookups, 4, 1) // the pool at 25%
	}
	lookups.probed = true
	assert.False(t, g.allow(2, lookups, 0))
	assert.True(t, g.allow(1, lookups, 0), "a lone sequence always may")

	var fresh acceptance
	assert.InDelta(t, 0.25, g.estimate(fresh), 1e-9, "the pool's")
	// Accepted whole, 4 drafts: (4 + 4·0.25) / 8 = 0.625; 8: 0.75.
	assert.False(t, g.allow(2, fresh, 4), "a first span that could not lift the estimate past the share")
	assert.True(t, g.allow(2, fresh, 8))
	assert.False(t, g.allow(3, fresh, 8))
	assert.True(t, g.allow(1, fresh, 1))

	exact := acceptance{probed: true}
	g.verified(&exact, 8, 8)
	assert.InDelta(t, (8+4*g.pool.accepted/g.pool.drafted)/12, g.estimate(exact), 1e-9)
	assert.True(t, g.allow(2, exact, 0))
	assert.False(t, g.allow(8, exact, 0))
	for range 4 {
		g.verified(&exact, 8, 8)
	}
	assert.True(t, g.allow(8, exact, 0), "its own acceptance outweighs the pool's: %.2f", g.estimate(exact))
}
