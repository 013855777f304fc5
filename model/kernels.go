package model

import (
	"fmt"

	"github.com/realizar-host/realizar-host/q4k"
)

// This file binds the model to q4k's kernels: row dot products per weight
// type, activation encoders, and the f16 dot product attention uses.

// dotF16 is q4k's f16·f16 row kernel: the K·q and V·p products of
// attention, over f16 bytes.
var dotF16 = mustDot(q4k.F16)

func mustDot(t q4k.Type) q4k.DotFunc {
	f, err := q4k.DotFor(t)
	if err != nil {
		panic(fmt.Sprintf("model: q4k has no %v kernel: %v", t, err))
	}
	return f
}

// kernelName names the kernels in use, as q4k reports them ("avx2",
// "reference").
func kernelName() string { return q4k.Fast.Name }

// encodeActs encodes x in the activation format rows of weight type w are
// multiplied with (w's vec_dot_type). dst is ActivationSize(w, len(x))
// bytes, checked at load.
func encodeActs(w q4k.Type, dst []byte, x []float32) {
	if err := q4k.QuantizeActivation(w, dst, x); err != nil {
		panic(fmt.Sprintf("model: activation shapes were checked at load: %v", err))
	}
}
