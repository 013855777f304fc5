package quant_test

import (
	"fmt"

	"github.com/realizar-host/realizar-host/internal/quant"
)

// A Q4_K matrix times a vector, the way a model layer does it: encode the
// activation once in the weight type's VecDotType, then run the row kernels.
func ExampleMatVec() {
	const rows, n = 2, 256
	rowSize, _ := quant.Q4_K.RowSize(n)
	w := make([]byte, rows*rowSize)
	x := make([]float32, n)
	for r := range rows {
		for i := range x {
			x[i] = float32((i+r)%7) - 3 // values -3..3
		}
		if err := quant.Quantize(quant.Q4_K, w[r*rowSize:(r+1)*rowSize], x); err != nil {
			panic(err)
		}
	}

	for i := range x {
		x[i] = 1
	}
	actSize, _ := quant.ActivationSize(quant.Q4_K, n) // a Q8_K block: 292 bytes
	act := make([]byte, actSize)
	if err := quant.QuantizeActivation(quant.Q4_K, act, x); err != nil {
		panic(err)
	}

	dst := make([]float32, rows)
	if err := quant.MatVec(dst, quant.Q4_K, w, act, n, 0, rows); err != nil {
		panic(err)
	}
	// The exact row sums are -6 and -2: the 4-bit grid of a row spanning
	// -3..3 is biased by about -0.013 per weight.
	fmt.Printf("%d-byte rows, %d-byte activation, row sums %.2f %.2f\n", rowSize, actSize, dst[0], dst[1])
	// Output: 144-byte rows, 292-byte activation, row sums -9.29 -5.29
}
