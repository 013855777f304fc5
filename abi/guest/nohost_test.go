//go:build !wasip1

package guest_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/abi/guest"
)

// Outside wasip1 the host functions answer as a host that gives nothing.
func TestNoHost(t *testing.T) {
	_, ok := guest.ConfigRaw("temperature")
	assert.False(t, ok)
	assert.Equal(t, -1, guest.VocabPiece(0, make([]byte, 8)))
	assert.Empty(t, guest.Prompt([]int32{1, 2}))
	assert.Zero(t, guest.ClockNs())
	assert.Equal(t, -1, guest.TokenAttrs(0, make([]abi.TokenAttr, 4)))
	assert.Empty(t, guest.Accepted([]int32{4, 5}, 2))
	guest.LogMsg(abi.LogError, "dropped")
}
