//go:build !wasip1

package guest_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/abi/guest"
)

// The ABI 2 host functions read the Fake outside wasip1.
func TestFakeV2Imports(t *testing.T) {
	guest.Fake.Attrs = []abi.TokenAttr{abi.PackTokenAttr(abi.AttrEOG, 3), abi.PackTokenAttr(0, 1)}
	guest.Fake.Accepted = []int32{4, 5}
	defer func() { guest.Fake.Attrs, guest.Fake.Accepted = nil, nil }()
	buf := make([]abi.TokenAttr, 4)
	assert.Equal(t, 2, guest.TokenAttrs(0, buf))
	assert.Equal(t, 1, guest.TokenAttrs(1, buf))
	assert.Equal(t, -1, guest.TokenAttrs(2, buf))
	assert.Equal(t, []int32{4, 5}, guest.Accepted(nil, 2))
}
