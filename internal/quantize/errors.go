package quantize

import (
	"errors"
	"fmt"
	"strings"
)

var (
	// ErrFileType reports a file type File does not write.
	ErrFileType = errors.New("quantize: unknown file type")
	// ErrArchitecture reports a model whose architecture has no type rules
	// here (only llama, qwen2, qwen3, phi3 and gemma3 without experts, and
	// qwen3moe, have them).
	ErrArchitecture = errors.New("quantize: unsupported architecture")
	// ErrSourceType reports a tensor that must change type but is not stored
	// as F32, F16 or BF16 (llama.cpp refuses to requantize too).
	ErrSourceType = errors.New("quantize: source tensor type cannot be converted")
	// ErrMetadata reports missing or malformed metadata the rules need
	// (general.architecture, <arch>.block_count).
	ErrMetadata = errors.New("quantize: bad metadata")
)

// TensorError is a failure to quantize one tensor.
type TensorError struct {
	// Name is the tensor's name.
	Name string
	// Err is the cause: ErrSourceType, a quant or gguf error, or an I/O error.
	Err error
}

func (e *TensorError) Error() string {
	return fmt.Sprintf("quantize: tensor %q: %s", e.Name, strings.TrimPrefix(e.Err.Error(), "quantize: "))
}

// Unwrap returns e.Err.
func (e *TensorError) Unwrap() error { return e.Err }
