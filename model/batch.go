package model

import (
	"errors"
	"fmt"

	"github.com/realizar-host/realizar-host/forward"
)

// ErrForeignSequence is a Batch row whose Sequence is not a *Sequence of
// the same Model as the one the pass runs on.
var ErrForeignSequence = errors.New("model: sequence of another model in a batched pass")

var _ forward.Batcher = (*Sequence)(nil)

// Batch runs the rows of several sequences (distinct Sequences of this
// sequence's Model, s's own included or not) in one pass: each
// weight row is read once for all rows, and each row's RoPE, KV store and
// attention use its own sequence and position. The rows' logits are
// bit-identical to each sequence's logits alone with the same spans (Step
// for one token, a Prefill pass for more): the matrix kernels compute each
// column independently of the others, and a sequence's rows take the batch
// orders when it has two or more in the pass, whatever the others hold.
//
// A row fails alone (Err set, left out of the pass) when its Sequence is not a
// *Sequence of s's Model (ErrForeignSequence), appears twice (ErrForeignSequence), or
// fails Step's checks (ErrPosition, forward.ErrBadToken,
// forward.ErrContextExceeded). The pass's scratch is the Model's, one for all
// its sequences (passes of one Model run one at a time); it grows to the total
// row count, which callers bound (the server's --batch-tokens).
func (s *Sequence) Batch(rows []forward.Rows) error {
	// The pass runs on the Model's one batch scratch, so that any sequence may
	// lead a pass without each growing scratch for the widest batch.
	s.m.batchMu.Lock()
	defer s.m.batchMu.Unlock()
	if s.m.batchSeq == nil {
		s.m.batchSeq = s.m.NewSequence()
	}
	return s.m.batchSeq.runBatch(rows)
}

// runBatch is Batch on s's scratch.
func (s *Sequence) runBatch(rows []forward.Rows) error {
	seqs := s.rows[:0]
	for i := range rows {
		r := &rows[i]
		r.Out, r.Err = nil, nil
		st, ok := r.Sequence.(*Sequence)
		switch {
		case !ok || st == nil || st.m != s.m:
			r.Err = fmt.Errorf("%w (row %d: %T)", ErrForeignSequence, i, r.Sequence)
			continue
		case len(r.Tokens) == 0:
			r.Err = fmt.Errorf("%w: row %d has no tokens", ErrPosition, i)
			continue
		}
		dup := false
		for _, q := range seqs {
			dup = dup || q.seq == st
		}
		if dup {
			r.Err = fmt.Errorf("%w (row %d: the same sequence twice)", ErrForeignSequence, i)
			continue
		}
		if err := st.check(r.Tokens, r.Start); err != nil {
			r.Err = err
			continue
		}
		seqs = append(seqs, passSeq{seq: st, start: r.Start, tokens: r.Tokens, logits: r.Logits, every: r.Logits && r.Every})
	}
	s.rows = seqs
	if len(seqs) == 0 {
		return nil
	}
	for _, q := range seqs {
		q.seq.held = 0 // unknown until the pass completes
	}
	s.pass(seqs)
	j := 0
	for i := range rows {
		if rows[i].Err != nil {
			continue
		}
		switch q := seqs[j]; {
		case q.every:
			rows[i].Out = q.seq.verified[:len(q.tokens)*s.m.cfg.Vocab]
		case q.logits:
			rows[i].Out = q.seq.logits
		}
		j++
	}
	return nil
}
