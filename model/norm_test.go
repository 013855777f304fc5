package model

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRMSNorm(t *testing.T) {
	// mean(x²) = (9+16)/2 = 12.5; 1/sqrt(12.5) = 0.28284271.
	x := []float32{3, -4}
	w := []float32{1, 2}
	y := make([]float32, 2)
	rmsNorm(y, x, w, 0)
	assert.InDeltaSlice(t, []float32{0.8485281, -2.2627417}, y, 1e-6)

	// eps is added to the mean square.
	rmsNorm(y, []float32{0, 0}, w, 1e-6)
	assert.Equal(t, []float32{0, 0}, y)

	// y may alias x.
	rmsNorm(x, x, w, 0)
	assert.InDeltaSlice(t, []float32{0.8485281, -2.2627417}, x, 1e-6)
}
