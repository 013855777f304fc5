package host

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/realizar-host/realizar-host/abi"
)

// The host offers exactly the WASI functions the ABI allows.
func TestWASIFuncsAreTheAllowList(t *testing.T) {
	var names []string
	for _, f := range wasiFuncs {
		names = append(names, f.name)
	}
	assert.ElementsMatch(t, abi.WASIAllowList(), names)
}
