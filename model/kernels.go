package model

import (
	"fmt"

	"github.com/realizar-host/realizar-host/internal/quant"
)

// This file binds the model to quant's kernels: activation encoders and the
// kernels' name (the row dot products are bound per matrix at load).

// kernelName names the kernels in use, as quant reports them ("avx2",
// "reference").
func kernelName() string { return quant.Fast().Name }

// encodeActs encodes x in the activation format rows of weight type w are
// multiplied with (w's vec_dot_type). dst is ActivationSize(w, len(x))
// bytes, checked at load.
func encodeActs(w quant.Type, dst []byte, x []float32) {
	if err := quant.QuantizeActivation(w, dst, x); err != nil {
		panic(fmt.Sprintf("model: activation shapes were checked at load: %v", err))
	}
}
