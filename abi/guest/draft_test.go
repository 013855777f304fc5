package guest_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/abi/guest"
)

func TestDraftRegionPut(t *testing.T) {
	long := make([]int32, abi.MaxDraft+5)
	for i := range long {
		long[i] = int32(i + 1)
	}
	tests := []struct {
		name  string
		draft []int32
		limit int32
		want  int32
	}{
		{"all", []int32{4, 5, 6}, 8, 3},
		{"cut by limit", []int32{4, 5, 6}, 2, 2},
		{"empty", nil, 8, 0},
		{"negative limit", []int32{4}, -1, 0},
		{"cut by the region", long, 1000, abi.MaxDraft},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r guest.DraftRegion
			k := r.Put(tt.draft, tt.limit)
			assert.Equal(t, tt.want, k)
			assert.Equal(t, append([]int32{}, tt.draft[:k]...), r[:k])
		})
	}
}
