package enginetest

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestTokenVocab(t *testing.T) {
	v := NewTokenVocab(12, map[int32]string{3: "<s>", 11: "a longer one", 40: "ignored"}, 11)
	v.Control = []int32{3}
	for _, tt := range []struct {
		id           int32
		piece        string
		eog, control bool
	}{
		{0, "t0", false, false}, {3, "<s>", false, true}, {10, "t10", false, false},
		{11, "a longer one", true, false}, {12, "", false, false}, {-1, "", false, false},
	} {
		assert.Equal(t, tt.piece, string(v.Piece(tt.id)), tt.id)
		assert.Equal(t, tt.eog, v.IsEOG(tt.id), tt.id)
		assert.Equal(t, tt.control, v.IsControl(tt.id), tt.id)
		assert.False(t, v.IsByte(tt.id), tt.id)
	}
	assert.Equal(t, 12, v.Size())
	assert.Equal(t, len("a longer one"), v.MaxPieceLen())
	assert.Equal(t, 5, NewVocab([]string{"ab", "abcde", ""}).MaxPieceLen())
	assert.Equal(t, 3, (&Vocab{Pieces: [][]byte{[]byte("abc")}}).MaxPieceLen(), "a literal scans")
}
