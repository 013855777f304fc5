package enginetest

import (
	"errors"
	"fmt"

	"github.com/realizar-host/realizar-host/forward"
)

// ErrOutOfOrder is returned by CountingSequence when a Step or Prefill does not
// continue exactly the positions it holds (the Sequence precondition).
var ErrOutOfOrder = errors.New("enginetest: step out of order")

// Call is one recorded call into a CountingSequence.
type Call struct {
	Op    string // "reset", "step", "prefill" or "reserve"
	Token int32  // step: the token
	Pos   int    // step: the position; prefill: start; reserve: positions
	Len   int    // prefill: len(tokens)
}

// CountingSequence is a Sequence whose "model" is a counter: after token t at
// position p its logits are 0 except 1 at Next(t, p), so a greedy sampler
// generates Next's sequence. It checks the Sequence precondition (a Step at p
// needs positions 0..p-1 stepped since Reset) and records every call.
//
// It also implements forward.Reserver (a Reserve beyond Capacity grows it and
// drops the state, like a KV cache reallocation) and forward.BackendReporter.
// Wrap it with WithPrefill to add forward.Prefiller. Not safe for concurrent
// use.
type CountingSequence struct {
	// VocabSize is the logits length; it must be > 0.
	VocabSize int
	// Next is the token the logits point to after token at pos; nil means
	// (token+1) % VocabSize.
	Next func(token int32, pos int) int32
	// BackendName and GPU are what Backend reports ("" means "counting").
	BackendName string
	GPU         bool
	// Capacity is the positions reserved so far.
	Capacity int
	// FailNext, when set, is returned (wrapped) by the next Step or Prefill,
	// which then clears it: a one-shot fault.
	FailNext error
	// EmptyNext makes the next Step or Prefill return empty logits (one-shot).
	EmptyNext bool
	// Log is every call, in order.
	Log []Call

	held   int
	logits []float32
}

// NewCountingSequence returns a CountingSequence over vocabSize ids.
func NewCountingSequence(vocabSize int) *CountingSequence {
	return &CountingSequence{VocabSize: vocabSize}
}

// Reset forgets all positions.
func (c *CountingSequence) Reset() {
	c.Log = append(c.Log, Call{Op: "reset"})
	c.held = 0
}

// Step processes token at pos, which must not exceed the positions held
// (a step below them rewinds, as the Sequence contract allows).
func (c *CountingSequence) Step(token int32, pos int) ([]float32, error) {
	c.Log = append(c.Log, Call{Op: "step", Token: token, Pos: pos})
	return c.advance(token, pos)
}

// Held is the number of positions stepped since the last Reset.
func (c *CountingSequence) Held() int { return c.held }

// Reserve grows Capacity to positions, dropping the state when it grows.
func (c *CountingSequence) Reserve(positions int) (dropped bool, err error) {
	c.Log = append(c.Log, Call{Op: "reserve", Pos: positions})
	if positions <= c.Capacity {
		return false, nil
	}
	c.Capacity, c.held = positions, 0
	return true, nil
}

// Backend reports BackendName (default "counting") and GPU.
func (c *CountingSequence) Backend() (name string, onGPU bool) {
	if c.BackendName == "" {
		return "counting", c.GPU
	}
	return c.BackendName, c.GPU
}

// Count returns how many recorded calls have op.
func (c *CountingSequence) Count(op string) int {
	n := 0
	for _, call := range c.Log {
		if call.Op == op {
			n++
		}
	}
	return n
}

// advance checks the precondition and the one-shot faults, then computes the
// logits after token at pos.
func (c *CountingSequence) advance(token int32, pos int) ([]float32, error) {
	if pos > c.held {
		return nil, fmt.Errorf("position %d while holding %d: %w", pos, c.held, ErrOutOfOrder)
	}
	if err := c.FailNext; err != nil {
		c.FailNext, c.held = nil, 0
		return nil, fmt.Errorf("counting step at %d: %w", pos, err)
	}
	c.held = pos + 1
	if c.EmptyNext {
		c.EmptyNext = false
		return nil, nil
	}
	next := (token + 1) % int32(c.VocabSize)
	if c.Next != nil {
		next = c.Next(token, pos)
	}
	c.logits = append(c.logits[:0], make([]float32, c.VocabSize)...)
	c.logits[next] = 1
	return c.logits, nil
}

// PrefillSequence is a CountingSequence with a batched pass (forward.Prefiller).
type PrefillSequence struct{ *CountingSequence }

// WithPrefill adds forward.Prefiller to c.
func WithPrefill(c *CountingSequence) PrefillSequence { return PrefillSequence{c} }

// Prefill processes tokens[start:] in one recorded call; start must not
// exceed the positions held.
func (p PrefillSequence) Prefill(tokens []int32, start int) ([]float32, error) {
	c := p.CountingSequence
	c.Log = append(c.Log, Call{Op: "prefill", Pos: start, Len: len(tokens)})
	if start > c.held || start >= len(tokens) {
		return nil, fmt.Errorf("prefill from %d of %d tokens while holding %d: %w", start, len(tokens), c.held, ErrOutOfOrder)
	}
	var logits []float32
	for pos := start; pos < len(tokens); pos++ {
		var err error
		if logits, err = c.advance(tokens[pos], pos); err != nil {
			return nil, err
		}
	}
	return logits, nil
}

// Bare hides every optional capability of a Sequence: the result is only a
// forward.Sequence (no Prefill, Reserve or Backend).
func Bare(seq forward.Sequence) forward.Sequence { return struct{ forward.Sequence }{seq} }
