package model

import (
	"fmt"

	"github.com/realizar-host/realizar-host/gguf"
	"github.com/realizar-host/realizar-host/internal/quant"
)

// Load builds a Model over f's tensors. Weights stay in f's mapping: f must
// stay open while the Model (or any of its Steps) is used, and the caller
// closes both (Model first).
//
// Errors, all at load time: ErrUnsupportedArch naming the architecture;
// a *ConfigError (wrapping ErrConfig) naming the metadata key; a *TensorError (wrapping
// ErrMissingTensor, ErrShape or ErrUnsupportedType) naming the tensor.
func Load(f *gguf.File, opts Options) (*Model, error) {
	return load(ggufSource{f}, opts)
}

// ReadConfig decodes the hyperparameters Load would run f with, from its
// metadata alone (no tensor is read; Vocab is left 0): for reports such as
// inspect's.
//
// Errors: those of Load's metadata checks (ErrUnsupportedArch, a
// *ConfigError naming the key).
func ReadConfig(f *gguf.File) (Config, error) { return decodeConfig(f) }

// ggufSource adapts a *gguf.File to tensorSource.
type ggufSource struct{ *gguf.File }

func (s ggufSource) tensor(name string) ([]int64, quant.Type, []byte, error) {
	info, ok := s.Tensor(name)
	if !ok {
		return nil, 0, nil, &TensorError{Tensor: name, Err: ErrMissingTensor}
	}
	data, err := s.TensorData(name)
	if err != nil {
		return nil, 0, nil, &TensorError{Tensor: name, Err: err}
	}
	typ := quant.Type(info.Type)
	if !typ.Known() {
		return nil, 0, nil, &TensorError{Tensor: name, Err: ErrUnsupportedType, Detail: fmt.Sprintf("ggml type %d (%v)", uint32(info.Type), info.Type)}
	}
	return info.Dims, typ, data, nil
}

// releasePages gives the mapped file's pages of b back to the operating
// system (gguf.File.ReleasePages).
func (s ggufSource) releasePages(b []byte) { s.ReleasePages(b) }
