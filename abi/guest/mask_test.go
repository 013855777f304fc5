package guest_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/abi/guest"
)

func TestMask(t *testing.T) {
	m := guest.NewMask(70)
	assert.Len(t, m, abi.MaskWords(70))
	for _, id := range []int32{0, 31, 32, 69} {
		assert.False(t, m.Allows(id))
		m.Allow(id)
		assert.True(t, m.Allows(id))
	}
	assert.Equal(t, guest.Mask{1<<0 | 1<<31, 1 << 0, 1 << 5}, m)
	m.Deny(31)
	assert.False(t, m.Allows(31))
	assert.True(t, m.Allows(0))
}
