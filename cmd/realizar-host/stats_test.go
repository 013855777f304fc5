package main

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/realizar-host/realizar-host/engine"
)

// TestStatsLineDrafts: the drafts part counts its passes in English ("1
// pass", not "1 passes").
func TestStatsLineDrafts(t *testing.T) {
	for _, tt := range []struct {
		drafted, accepted, passes int
		want                      string
	}{
		{0, 0, 0, "drafts 0 accepted / 0 rejected in 0 passes"},
		{3, 3, 1, "drafts 3 accepted / 0 rejected in 1 pass"},
		{48, 40, 12, "drafts 40 accepted / 8 rejected in 12 passes"},
	} {
		var turn engine.Turn
		turn.Drafts.Drafted, turn.Drafts.Accepted, turn.Drafts.Passes = tt.drafted, tt.accepted, tt.passes
		assert.Contains(t, statsLine(turn, true, nil), "| "+tt.want+" |")
	}
	assert.NotContains(t, statsLine(engine.Turn{}, false, nil), "drafts")
}
