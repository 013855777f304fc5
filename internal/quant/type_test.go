package quant_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/gguf"
	"github.com/realizar-host/realizar-host/internal/quant"
)

func TestTypeTable(t *testing.T) {
	tests := []struct {
		typ        quant.Type
		id         uint32
		name       string
		block, sz  int
		vecDot     quant.Type
		row256Size int
	}{
		{quant.F32, 0, "F32", 1, 4, quant.F32, 1024},
		{quant.F16, 1, "F16", 1, 2, quant.F16, 512},
		{quant.Q4_0, 2, "Q4_0", 32, 18, quant.Q8_0, 144},
		{quant.Q4_1, 3, "Q4_1", 32, 20, quant.Q8_1, 160},
		{quant.Q5_0, 6, "Q5_0", 32, 22, quant.Q8_0, 176},
		{quant.Q5_1, 7, "Q5_1", 32, 24, quant.Q8_1, 192},
		{quant.Q8_0, 8, "Q8_0", 32, 34, quant.Q8_0, 272},
		{quant.Q8_1, 9, "Q8_1", 32, 36, quant.Q8_1, 288},
		{quant.Q4_K, 12, "Q4_K", 256, 144, quant.Q8_K, 144},
		{quant.Q5_K, 13, "Q5_K", 256, 176, quant.Q8_K, 176},
		{quant.Q6_K, 14, "Q6_K", 256, 210, quant.Q8_K, 210},
		{quant.Q8_K, 15, "Q8_K", 256, 292, quant.Q8_K, 292},
		{quant.BF16, 30, "BF16", 1, 2, quant.BF16, 512},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.id, uint32(tc.typ))
			assert.True(t, tc.typ.Known())
			assert.Equal(t, tc.name, tc.typ.String())
			assert.Equal(t, gguf.TensorType(tc.id).String(), tc.typ.String(), "one spelling with package gguf")
			assert.Equal(t, tc.block, tc.typ.BlockSize())
			assert.Equal(t, tc.sz, tc.typ.TypeSize())
			assert.Equal(t, tc.vecDot, tc.typ.VecDotType())
			got, err := tc.typ.RowSize(256)
			require.NoError(t, err)
			assert.Equal(t, tc.row256Size, got)
			got, err = tc.typ.RowSize(0)
			require.NoError(t, err)
			assert.Zero(t, got)
		})
	}
}

func TestRowSizeErrors(t *testing.T) {
	_, err := quant.Q4_K.RowSize(100)
	require.ErrorIs(t, err, quant.ErrRowLength)
	var le *quant.LengthError
	require.True(t, errors.As(err, &le))
	assert.Equal(t, 100, le.N)
	assert.Contains(t, err.Error(), "Q4_K")

	_, err = quant.Q8_0.RowSize(-32)
	require.ErrorIs(t, err, quant.ErrRowLength)

	unknown := quant.Type(10) // q2_K: not implemented here
	assert.False(t, unknown.Known())
	assert.Equal(t, "type(10)", unknown.String())
	assert.Zero(t, unknown.BlockSize())
	_, err = unknown.RowSize(32)
	require.ErrorIs(t, err, quant.ErrUnknownType)
}
