package cuda

import (
	"errors"
	"fmt"
)

// Sentinel errors, wrapped with context; test with errors.Is.
var (
	// ErrUnavailable: no usable GPU: the binary was built without the
	// `cuda` tag, or the driver reports no device (or none of compute
	// capability 8.0 or later) at the requested ordinal.
	ErrUnavailable = errors.New("cuda: GPU backend unavailable")
	// ErrUnsupportedType: a tensor's ggml type has no GPU kernel.
	ErrUnsupportedType = errors.New("cuda: unsupported tensor type")
	// ErrUnsupportedArch: the GPU forward does not compute the model's
	// architecture (qwen3's per-head Q/K norms); NewSequence then runs on the
	// CPU, loudly, as after a device failure.
	ErrUnsupportedArch = errors.New("cuda: unsupported architecture")
	// ErrParity: the GPU's logits disagree with the CPU forward's (see
	// judge).
	ErrParity = errors.New("cuda: GPU parity gate rejected the device")
)

// TensorError reports a load-time problem with one named tensor. It unwraps
// to ErrUnsupportedType or a quant row-length error.
type TensorError struct {
	Tensor string // GGUF tensor name, e.g. "blk.3.ffn_down.weight"
	Detail string // e.g. "ggml type q4_1"
	Err    error
}

func (e *TensorError) Error() string {
	if e.Detail == "" {
		return fmt.Sprintf("cuda: tensor %s: %v", e.Tensor, e.Err)
	}
	return fmt.Sprintf("cuda: tensor %s: %v: %s", e.Tensor, e.Err, e.Detail)
}

func (e *TensorError) Unwrap() error { return e.Err }
