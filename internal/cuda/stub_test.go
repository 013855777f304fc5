//go:build !cuda && !cudaemu

package cuda

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Without the cuda tag there is no GPU backend, and asking for one says so.
func TestStubUnavailable(t *testing.T) {
	assert.ErrorIs(t, Available(0), ErrUnavailable)
	s, err := NewSequence(nil, Options{})
	assert.Nil(t, s)
	assert.ErrorIs(t, err, ErrUnavailable)
	assert.ErrorContains(t, err, "-tags cuda")
}
