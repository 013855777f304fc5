package q4k_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/gguf"
	"github.com/realizar-host/realizar-host/q4k"
)

func TestTypeTable(t *testing.T) {
	tests := []struct {
		typ        q4k.Type
		id         uint32
		name       string
		block, sz  int
		vecDot     q4k.Type
		row256Size int
	}{
		{q4k.F32, 0, "F32", 1, 4, q4k.F32, 1024},
		{q4k.F16, 1, "F16", 1, 2, q4k.F16, 512},
		{q4k.Q4_0, 2, "Q4_0", 32, 18, q4k.Q8_0, 144},
		{q4k.Q4_1, 3, "Q4_1", 32, 20, q4k.Q8_1, 160},
		{q4k.Q5_0, 6, "Q5_0", 32, 22, q4k.Q8_0, 176},
		{q4k.Q5_1, 7, "Q5_1", 32, 24, q4k.Q8_1, 192},
		{q4k.Q8_0, 8, "Q8_0", 32, 34, q4k.Q8_0, 272},
		{q4k.Q8_1, 9, "Q8_1", 32, 36, q4k.Q8_1, 288},
		{q4k.Q4_K, 12, "Q4_K", 256, 144, q4k.Q8_K, 144},
		{q4k.Q5_K, 13, "Q5_K", 256, 176, q4k.Q8_K, 176},
		{q4k.Q6_K, 14, "Q6_K", 256, 210, q4k.Q8_K, 210},
		{q4k.Q8_K, 15, "Q8_K", 256, 292, q4k.Q8_K, 292},
		{q4k.BF16, 30, "BF16", 1, 2, q4k.BF16, 512},
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
	_, err := q4k.Q4_K.RowSize(100)
	require.ErrorIs(t, err, q4k.ErrRowLength)
	var le *q4k.LengthError
	require.True(t, errors.As(err, &le))
	assert.Equal(t, 100, le.N)
	assert.Contains(t, err.Error(), "Q4_K")

	_, err = q4k.Q8_0.RowSize(-32)
	require.ErrorIs(t, err, q4k.ErrRowLength)

	unknown := q4k.Type(10) // q2_K: not implemented here
	assert.False(t, unknown.Known())
	assert.Equal(t, "type(10)", unknown.String())
	assert.Zero(t, unknown.BlockSize())
	_, err = unknown.RowSize(32)
	require.ErrorIs(t, err, q4k.ErrUnknownType)
}
