//go:build !cuda && !cudaemu

package cuda

import (
	"fmt"

	"github.com/realizar-host/realizar-host/model"
)

// Available reports whether a GPU usable by this package is at ordinal
// device. This build has no GPU backend: it always returns an error
// wrapping ErrUnavailable.
func Available(device int) error {
	return fmt.Errorf("%w: built without the cuda tag (rebuild with -tags cuda)", ErrUnavailable)
}

// NewSequence would upload m to the GPU and judge it against the CPU forward.
// This build has no GPU backend: it always returns an error wrapping
// ErrUnavailable.
func NewSequence(m *model.Model, opts Options) (*Sequence, error) {
	return nil, Available(opts.Device)
}
