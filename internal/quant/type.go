package quant

import "fmt"

// Type is a ggml tensor type id, as stored in a GGUF tensor info.
type Type uint32

// The ggml type ids this package implements. The numbers are ggml's and are
// part of the GGUF format.
const (
	F32  Type = 0
	F16  Type = 1
	Q4_0 Type = 2
	Q4_1 Type = 3
	Q5_0 Type = 6
	Q5_1 Type = 7
	Q8_0 Type = 8
	Q8_1 Type = 9 // activations only: the right-hand side of Q4_1 and Q5_1 dot products
	Q4_K Type = 12
	Q5_K Type = 13
	Q6_K Type = 14
	Q8_K Type = 15 // activations only: the right-hand side of K-quant dot products
	BF16 Type = 30
)

// qk is the number of weights in a K-quant super-block (ggml's QK_K).
const qk = 256

// QK8 is the number of weights in a Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 or Q8_1
// block.
const qk8 = 32

type typeInfo struct {
	name      string
	blockSize int // weights per block
	typeSize  int // bytes per block
	vecDot    Type
}

var types = map[Type]typeInfo{
	F32:  {"F32", 1, 4, F32},
	F16:  {"F16", 1, 2, F16},
	BF16: {"BF16", 1, 2, BF16},
	Q4_0: {"Q4_0", qk8, 18, Q8_0},
	Q4_1: {"Q4_1", qk8, 20, Q8_1},
	Q5_0: {"Q5_0", qk8, 22, Q8_0},
	Q5_1: {"Q5_1", qk8, 24, Q8_1},
	Q8_0: {"Q8_0", qk8, 34, Q8_0},
	Q8_1: {"Q8_1", qk8, 36, Q8_1},
	Q4_K: {"Q4_K", qk, 144, Q8_K},
	Q5_K: {"Q5_K", qk, 176, Q8_K},
	Q6_K: {"Q6_K", qk, 210, Q8_K},
	Q8_K: {"Q8_K", qk, 292, Q8_K},
}

// Known reports whether t is one of the types this package implements.
func (t Type) Known() bool {
	_, ok := types[t]
	return ok
}

// String returns the type's name as gguf.TensorType spells it ("Q4_K",
// "F16": gguf-py's names, ggml's upper-cased), or "type(N)" for a type this
// package does not implement.
func (t Type) String() string {
	if ti, ok := types[t]; ok {
		return ti.name
	}
	return fmt.Sprintf("type(%d)", uint32(t))
}

// BlockSize returns the number of weights per block: 1 for F32, F16 and BF16,
// 32 for Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 and Q8_1, 256 for the K-quants. It returns 0 for an
// unknown type.
func (t Type) BlockSize() int { return types[t].blockSize }

// TypeSize returns the number of bytes per block (see the package doc for
// each layout). It returns 0 for an unknown type.
func (t Type) TypeSize() int { return types[t].typeSize }

// VecDotType returns the type ggml encodes the activations in when it
// multiplies a row of t with them: Q8_K for Q4_K, Q5_K and Q6_K; Q8_0 for
// Q4_0, Q5_0 and Q8_0; Q8_1 for Q4_1 and Q5_1; t itself for F32, F16 and
// BF16 (and for the activation types Q8_0, Q8_1, Q8_K). It returns t for an
// unknown type.
func (t Type) VecDotType() Type {
	if ti, ok := types[t]; ok {
		return ti.vecDot
	}
	return t
}

// RowSize returns the size in bytes of a row of n weights of type t.
//
// It fails with an error wrapping ErrUnknownType for a type this package does
// not implement, and ErrRowLength when n is negative or not a multiple of
// t.BlockSize().
func (t Type) RowSize(n int) (int, error) {
	ti, ok := types[t]
	if !ok {
		return 0, fmt.Errorf("quant: %v: %w", t, ErrUnknownType)
	}
	if n < 0 || n%ti.blockSize != 0 {
		return 0, &LengthError{Type: t, N: n, Err: ErrRowLength}
	}
	return n / ti.blockSize * ti.typeSize, nil
}

// rowSize is RowSize for a known type and a checked n.
func rowSize(t Type, n int) int {
	ti := types[t]
	return n / ti.blockSize * ti.typeSize
}
