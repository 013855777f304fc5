package model

import (
	"errors"
	"fmt"
)

// Sentinel errors, wrapped with context; test with errors.Is.
var (
	// ErrUnsupportedArch: general.architecture names an architecture this
	// package has no forward for.
	ErrUnsupportedArch = errors.New("model: unsupported architecture")
	// ErrUnsupportedType: a tensor's ggml type has no kernel here.
	ErrUnsupportedType = errors.New("model: unsupported tensor type")
	// ErrMissingTensor: a required tensor is absent from the file.
	ErrMissingTensor = errors.New("model: missing tensor")
	// ErrShape: a tensor's dimensions disagree with the config.
	ErrShape = errors.New("model: tensor shape mismatch")
	// ErrConfig: a metadata value is missing, out of range or inconsistent.
	ErrConfig = errors.New("model: invalid config")
	// ErrPosition: Step or Prefill was asked for a position whose
	// predecessors are not held.
	ErrPosition = errors.New("model: position not contiguous with the cache")
	// ErrClosed: the Model was closed.
	ErrClosed = errors.New("model: closed")
)

// TensorError reports a load-time problem with one named tensor. It unwraps
// to ErrUnsupportedType, ErrMissingTensor, ErrShape or a gguf error.
type TensorError struct {
	Tensor string // GGUF tensor name, e.g. "blk.3.ffn_down.weight"
	Detail string // what was expected, e.g. "dims [172 64], want [64 172]"
	Err    error
}

func (e *TensorError) Error() string {
	if e.Detail == "" {
		return fmt.Sprintf("tensor %s: %v", e.Tensor, e.Err)
	}
	return fmt.Sprintf("tensor %s: %v: %s", e.Tensor, e.Err, e.Detail)
}

func (e *TensorError) Unwrap() error { return e.Err }

// ConfigError reports a metadata key whose value is missing, of the wrong
// type, out of range or inconsistent with another key. It unwraps to
// ErrConfig and, when the GGUF reader failed, to the reader's error (a
// missing key is gguf.ErrKeyNotFound).
type ConfigError struct {
	Key    string // full metadata key, e.g. "qwen3moe.expert_used_count"
	Detail string // what is wrong, naming the key; empty when Err says it
	Err    error  // the GGUF reader's error, or nil
}

func (e *ConfigError) Error() string {
	if e.Detail != "" {
		return ErrConfig.Error() + ": " + e.Detail
	}
	return ErrConfig.Error() + ": " + e.Err.Error()
}

// Unwrap returns ErrConfig and the reader's error, if any.
func (e *ConfigError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrConfig}
	}
	return []error{ErrConfig, e.Err}
}

// configErr is a *ConfigError for key with a formatted detail.
func configErr(key, format string, args ...any) *ConfigError {
	return &ConfigError{Key: key, Detail: fmt.Sprintf(format, args...)}
}
