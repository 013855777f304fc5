package enginetest

import (
	"fmt"
	"slices"
)

// Vocab is an engine.Vocab from a table of pieces.
type Vocab struct {
	Pieces [][]byte
	EOG    []int32
}

// NewVocab returns a Vocab whose id i has pieces[i]; eog lists the
// end-of-generation ids.
func NewVocab(pieces []string, eog ...int32) *Vocab {
	v := &Vocab{EOG: eog}
	for _, p := range pieces {
		v.Pieces = append(v.Pieces, []byte(p))
	}
	return v
}

// NewCountingVocab returns a Vocab of n ids whose pieces are "<id> " ("0 ",
// "1 ", ...), matching a CountingSequence's output.
func NewCountingVocab(n int, eog ...int32) *Vocab {
	pieces := make([]string, n)
	for i := range pieces {
		pieces[i] = fmt.Sprintf("%d ", i)
	}
	return NewVocab(pieces, eog...)
}

// Piece returns the bytes of id, nil out of range.
func (v *Vocab) Piece(id int32) []byte {
	if id < 0 || int(id) >= len(v.Pieces) {
		return nil
	}
	return v.Pieces[id]
}

// IsEOG reports whether id is listed in EOG.
func (v *Vocab) IsEOG(id int32) bool { return slices.Contains(v.EOG, id) }

// Size is the number of pieces.
func (v *Vocab) Size() int { return len(v.Pieces) }
