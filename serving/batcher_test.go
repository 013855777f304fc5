package serving

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A prompt's chunks are never one row, and never leave one row behind,
// while two or more are left and the pass has room: a pass of one row
// sums in the one-token order, two or more in the batch orders.
func TestPromptChunk(t *testing.T) {
	for _, tc := range []struct{ budget, left, room, want int }{
		{64, 25, 64, 25},
		{7, 25, 57, 7},
		{1, 25, 57, 2},
		{0, 25, 57, 2},
		{7, 8, 57, 6},
		{2, 3, 57, 3},
		{1, 2, 57, 2},
		{5, 1, 57, 1},
		{0, 1, 57, 1},
		{24, 25, 57, 23},
		{64, 25, 10, 10},
		{64, 11, 10, 9},
		{2, 3, 2, 2}, // no room for three: the last row goes alone
		{5, 25, 1, 1},
	} {
		got := promptChunk(tc.budget, tc.left, tc.room)
		require.Equal(t, tc.want, got, "budget %d, left %d, room %d", tc.budget, tc.left, tc.room)
		require.LessOrEqual(t, got, max(tc.room, 1))
		if tc.left >= 3 && tc.room >= 3 {
			require.GreaterOrEqual(t, got, 2)
			require.NotEqual(t, 1, tc.left-got)
		}
	}
}
