//go:build cuda || cudaemu

package cuda

import (
	"errors"
	"os"

	"github.com/realizar-host/realizar-host/model"
)

// NewSequence uploads m to the GPU at opts.Device, runs the parity gate (or
// takes its cached verdict) and returns the gated Step: on the GPU when the
// gate passes, on the CPU (loudly, see Step) when it rejects the device or
// the device fails after it was found (out of memory, a JIT error), and
// for an architecture the GPU forward does not compute (ErrUnsupportedArch:
// qwen3).
//
// Errors (nothing to fall back from, so an explicit GPU request fails):
// ErrUnavailable when there is no usable device; a *TensorError naming a
// tensor whose type has no GPU kernel.
func NewSequence(m *model.Model, opts Options) (*Sequence, error) {
	if err := Available(opts.Device); err != nil {
		return nil, err
	}
	g, err := newGPUSequence(m, opts)
	var te *TensorError
	switch {
	case errors.Is(err, ErrUnavailable) || errors.As(err, &te):
		return nil, err
	case err != nil:
		return newFallenSequence(m, opts, "cuda device", err), nil
	}
	key := verdictKey{fileSHA256: opts.FileSHA256, device: g.DeviceName(), kernelHash: kernelHash()}
	return newGatedSequence(m, g, opts, key), nil
}

// newFallenSequence is a Step that starts on the CPU because the device failed
// after it was found (out of memory, a JIT error).
func newFallenSequence(m *model.Model, opts Options, device string, cause error) *Sequence {
	s := &Sequence{m: m, cpu: m.NewSequence(), device: device, stderr: opts.Stderr}
	if s.stderr == nil {
		s.stderr = os.Stderr
	}
	s.fallBack(cause)
	return s
}
