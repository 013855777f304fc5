package forward

import (
	"fmt"
	"time"
)

// Batcher is an optional Sequence capability: one pass over the rows
// of several sequences of the same model, each weight read once for
// all of them. A row's logits must not depend on the other rows of the pass
// (on the CPU forward they are bit-identical to the sequence's logits
// alone).
//
// Batch may be called on any one of the rows' sequences; every row's
// Sequence is a distinct one of the same model and concrete type. It first checks
// each row as Step would (positions, tokens, context): a row that fails
// gets its Err set and is left out of the pass. A returned error fails the
// whole pass: every row's sequence is then in an unknown state (the caller
// resets them). On success each checked row's sequence holds positions
// 0..Start+len(Tokens)-1, and a row with Logits has Out set.
type Batcher interface {
	Batch(rows []Rows) error
}

// Rows is one sequence's part of a Batch pass.
type Rows struct {
	// Sequence is the sequence's state (its KV cache).
	Sequence Sequence
	// Start is the position of Tokens[0]; Sequence holds positions 0..Start-1
	// (positions after them are discarded and overwritten).
	Start int
	// Tokens are the new tokens, at least one.
	Tokens []int32
	// Logits asks for the logits after the last token.
	Logits bool
	// Every (with Logits) asks for the logits after every token, each row
	// summed in the one-token order as a Verifier's rows are (bit-identical
	// to Step at its position): a verify pass of speculative decoding
	// amid other sequences' rows.
	Every bool
	// Out is set by Batch when Logits: [n_vocab]float32, or with Every
	// [len(Tokens)*n_vocab]float32, valid until the sequence's next call.
	Out []float32
	// Err is set by Batch for a row that failed its check.
	Err error
}

// Span is one sequence's part of ForwardBatch: tokens[Start:] of its
// forward, or the first Max of them (a chunk of a long prompt).
type Span struct {
	// Fwd is the sequence's forward; the Fwds of one call are distinct.
	Fwd *SequenceForward
	// Tokens and Start are as for ArchForward.Forward: tokens[:Start] are
	// held, and a Start the forward does not hold replays from 0.
	Tokens []int32
	Start  int
	// Max caps the tokens processed in this pass (chunked prefill); 0
	// means all of them. When fewer than the rest are processed, Logits
	// stays nil and Fwd.Held() tells where the next chunk starts.
	Max int
	// Verify asks for the logits after every token of Tokens[Start:], as
	// SequenceForward.Verify returns them (a speculative decoder's verify
	// pass: the last accepted token and its drafts); Max is then ignored.
	Verify bool

	// Logits is set when the span reached the end of Tokens: the logits
	// after the last token, [n_vocab]float32, or with Verify after every
	// token of Tokens[Start:], [n*n_vocab]float32; valid until Fwd's next
	// forward.
	Logits []float32
	// Err is the span's failure (its forward then holds nothing).
	Err error
	// Took is the wall time of the pass the span ran in.
	Took time.Duration
}

// ForwardBatch runs spans of several sequences in one pass when their sequences
// implement Batcher (one model: each weight is read once for every row
// of every span), and one span after another otherwise. Each span gets its
// own result: a span that fails its checks fails alone; a failed pass fails
// every span in it. Every Fwd keeps SequenceForward's bookkeeping (Held), so a
// span resumes exactly at what its forward holds. A Verify span joins the
// pass when its forward holds Tokens[:Start] and runs alone through
// SequenceForward.Verify otherwise (which replays first).
func ForwardBatch(spans []Span) {
	rows := make([]Rows, 0, len(spans))
	idx := make([]int, 0, len(spans))
	var batcher Batcher
	for i := range spans {
		sp := &spans[i]
		sp.Logits, sp.Err, sp.Took = nil, nil, 0
		start, err := sp.Fwd.plan(sp.Tokens, sp.Start, len(sp.Tokens))
		if err != nil {
			sp.Err = err
			continue
		}
		end := len(sp.Tokens)
		if sp.Max > 0 && !sp.Verify {
			end = min(end, start+sp.Max)
		}
		b, ok := sp.Fwd.seq.(Batcher)
		if !ok || (sp.Verify && start != sp.Start) {
			t0 := time.Now()
			if sp.Verify {
				sp.Logits, sp.Err = sp.Fwd.Verify(sp.Tokens, sp.Start)
			} else {
				sp.Logits, sp.Err = sp.Fwd.forwardRange(sp.Tokens, start, end)
			}
			sp.Took = time.Since(t0)
			continue
		}
		if batcher == nil {
			batcher = b
		}
		sp.Fwd.held = 0
		rows = append(rows, Rows{Sequence: sp.Fwd.seq, Start: start, Tokens: sp.Tokens[start:end], Logits: end == len(sp.Tokens), Every: sp.Verify})
		idx = append(idx, i)
	}
	if len(rows) == 0 {
		return
	}
	t0 := time.Now()
	err := batcher.Batch(rows)
	took := time.Since(t0)
	for j, row := range rows {
		sp := &spans[idx[j]]
		sp.Took = took
		end := row.Start + len(row.Tokens)
		switch {
		case err != nil:
			sp.Err = fmt.Errorf("sequence forward: batched pass: %w", err)
		case row.Err != nil:
			sp.Err = fmt.Errorf("sequence forward: positions %d..%d: %w", row.Start, end-1, row.Err)
		case row.Logits && len(row.Out) == 0:
			sp.Err = fmt.Errorf("sequence forward: empty logits at position %d: %w", end-1, ErrBadLogits)
		case row.Every && len(row.Out)%len(row.Tokens) != 0:
			sp.Err = fmt.Errorf("sequence forward: %d logits for %d rows: %w", len(row.Out), len(row.Tokens), ErrBadLogits)
		default:
			sp.Fwd.held = end
			if len(row.Tokens) > 1 && !row.Every {
				sp.Fwd.batched++
			}
			sp.Logits = row.Out
		}
	}
}

// forwardRange processes tokens[start:end] (start already planned) one span
// alone: through Prefill when the sequence has it and the span is longer than
// one token, else token by token. Logits are returned only when end ==
// len(tokens). Held() is end afterwards, or 0 after an error.
func (f *SequenceForward) forwardRange(tokens []int32, start, end int) ([]float32, error) {
	var logits []float32
	var err error
	if f.prefill != nil && end-start > 1 {
		f.held = 0
		logits, err = f.prefill.Prefill(tokens[:end], start)
		if err != nil {
			return nil, fmt.Errorf("sequence forward: prefill positions %d..%d: %w", start, end-1, err)
		}
		f.batched++
	} else {
		for pos := start; pos < end; pos++ {
			f.held = 0
			logits, err = f.seq.Step(tokens[pos], pos)
			if err != nil {
				return nil, fmt.Errorf("sequence forward: step token %d at position %d: %w", tokens[pos], pos, err)
			}
			f.held = pos + 1
		}
	}
	if len(logits) == 0 {
		f.held = 0
		return nil, fmt.Errorf("sequence forward: empty logits at position %d: %w", end-1, ErrBadLogits)
	}
	f.held = end
	if end < len(tokens) {
		return nil, nil
	}
	return logits, nil
}
