package guest

import "github.com/realizar-host/realizar-host/abi"

// Mask is an allowed-token mask (ABI 2): abi.MaskWords(n_vocab) words, bit
// id%32 of word id/32 allows token id. A mask-mode processor keeps one in
// a global (the Go heap does not move it), changes only the bits that
// change from step to step, and returns MaskAddress(m) (wasip1 only) from
// realizar_process.
type Mask []uint32

// NewMask returns a mask over nVocab tokens that allows none.
func NewMask(nVocab int) Mask { return make(Mask, abi.MaskWords(nVocab)) }

// Allow sets id's bit.
func (m Mask) Allow(id int32) { m[id>>5] |= 1 << (id & 31) }

// Deny clears id's bit.
func (m Mask) Deny(id int32) { m[id>>5] &^= 1 << (id & 31) }

// Allows reports whether id's bit is set.
func (m Mask) Allows(id int32) bool { return m[id>>5]>>(id&31)&1 != 0 }
