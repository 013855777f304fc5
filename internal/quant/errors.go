package quant

import (
	"errors"
	"fmt"
)

// Sentinel errors; the functions of this package wrap them, so callers test
// with errors.Is.
var (
	// ErrUnknownType: a type id this package does not implement.
	ErrUnknownType = errors.New("quant: unsupported tensor type")
	// ErrRowLength: a row length that is negative or not a multiple of the
	// type's block size.
	ErrRowLength = errors.New("quant: row length not a multiple of the block size")
	// ErrShortBuffer: a source or destination slice shorter than the row needs.
	ErrShortBuffer = errors.New("quant: buffer too short")
)

// LengthError reports a row length or buffer size that does not fit a type.
// It unwraps to ErrRowLength or ErrShortBuffer.
type LengthError struct {
	Type Type
	N    int    // the row length in weights
	What string // which buffer was short ("src", "dst", "act"); empty for ErrRowLength
	Have int    // the length it has (bytes or elements, as the function documents)
	Want int    // the length it needs
	Err  error
}

func (e *LengthError) Error() string {
	if e.What == "" {
		return fmt.Sprintf("quant: %v row of %d weights: %v (block size %d)", e.Type, e.N, e.Err, e.Type.BlockSize())
	}
	return fmt.Sprintf("quant: %v row of %d weights: %s has %d, needs %d: %v", e.Type, e.N, e.What, e.Have, e.Want, e.Err)
}

func (e *LengthError) Unwrap() error { return e.Err }

func shortErr(t Type, n int, what string, have, want int) error {
	return &LengthError{Type: t, N: n, What: what, Have: have, Want: want, Err: ErrShortBuffer}
}
