package enginetest

import (
	"fmt"
	"slices"
	"strconv"
)

// Vocab is an engine.Vocab from a table of pieces, with the host's
// optional capabilities: MaxPieceLen (host.MaxPieceLener) and IsControl
// and IsByte (host.TokenTyper, from Control and Byte; a Vocab that lists
// neither reports neither flag, as a vocabulary without the capability).
// It is the one test vocabulary of the tree's tests.
//
// # Notes
//
// The constructors record the longest piece for MaxPieceLen, so that an
// adapter made per benchmark iteration scans nothing: change Pieces after
// them and MaxPieceLen is stale.
type Vocab struct {
	Pieces [][]byte
	EOG    []int32 // end-of-generation ids
	// Control and Byte are the control and byte-fallback ids.
	Control, Byte []int32
	maxLen        int // the longest piece, as the constructors saw it; 0: scan
}

// NewVocab returns a Vocab whose id i has pieces[i]; eog lists the
// end-of-generation ids.
func NewVocab(pieces []string, eog ...int32) *Vocab {
	v := &Vocab{EOG: eog}
	for _, p := range pieces {
		v.Pieces = append(v.Pieces, []byte(p))
	}
	v.maxLen = v.MaxPieceLen()
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

// NewTokenVocab returns a Vocab of n ids whose pieces are "t<id>" ("t0",
// "t1", ...) but the ids in extra, which have extra's piece (ids outside
// [0, n) in extra are ignored); eog lists the end-of-generation ids.
func NewTokenVocab(n int, extra map[int32]string, eog ...int32) *Vocab {
	v := &Vocab{Pieces: make([][]byte, n), EOG: eog}
	for i := range v.Pieces {
		if s, ok := extra[int32(i)]; ok {
			v.Pieces[i] = []byte(s)
		} else {
			v.Pieces[i] = []byte("t" + strconv.Itoa(i))
		}
	}
	v.maxLen = v.MaxPieceLen()
	return v
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

// IsControl reports whether id is listed in Control.
func (v *Vocab) IsControl(id int32) bool { return slices.Contains(v.Control, id) }

// IsByte reports whether id is listed in Byte.
func (v *Vocab) IsByte(id int32) bool { return slices.Contains(v.Byte, id) }

// Size is the number of pieces.
func (v *Vocab) Size() int { return len(v.Pieces) }

// MaxPieceLen is the length in bytes of the longest piece (see the
// Notes on Vocab).
func (v *Vocab) MaxPieceLen() int {
	if v.maxLen > 0 {
		return v.maxLen
	}
	m := 0
	for _, p := range v.Pieces {
		m = max(m, len(p))
	}
	return m
}
