package model

import "fmt"

// Hidden runs tokens through the model from position 0 (forgetting what the
// sequence held) and returns the final hidden state of every token: the
// residual stream after the last block, normalized by output_norm, as
// [len(tokens)*Embd]float32 with row i the state after tokens[i]. It is
// what llama.cpp's graph names result_norm (its t_embd, the input of its
// pooling), and what the output head would multiply; the head itself is not
// run. The passes are Prefill's (the same chunks and batch orders), so the
// rows are llama.cpp's for a span in one ubatch. The result is dst grown
// as needed; it does not alias the step's scratch.
//
// Errors: ErrPosition for no tokens; those of Step (forward.ErrBadToken,
// forward.ErrContextExceeded) when a token is out of range or the tokens do
// not fit the context. Nothing is held on an error.
func (s *Sequence) Hidden(dst []float32, tokens []int32) ([]float32, error) {
	s.held = 0
	if len(tokens) == 0 {
		return nil, fmt.Errorf("%w: hidden states of no tokens", ErrPosition)
	}
	if err := s.check(tokens, 0); err != nil {
		return nil, err
	}
	c := &s.m.cfg
	n := len(tokens) * c.Embd
	if cap(dst) < n {
		dst = make([]float32, n)
	}
	dst = dst[:n]
	for lo := 0; lo < len(tokens); {
		hi := prefillChunkEnd(lo, len(tokens), s.m.batchSize)
		s.rows = append(s.rows[:0], passSeq{seq: s, start: lo, tokens: tokens[lo:hi]})
		s.pass(s.rows)
		for r := range hi - lo {
			rmsNorm(dst[(lo+r)*c.Embd:(lo+r+1)*c.Embd], s.x[r*c.Embd:(r+1)*c.Embd], s.m.outNorm, c.RMSEps)
		}
		lo = hi
	}
	return dst, nil
}
