package draft

import (
	"fmt"
	"sync"

	"github.com/realizar-host/realizar-host/forward"
)

// passes batches the draft model's forwards of concurrent sequences (a
// server's turns, each drafting on its own goroutine) into shared passes
// when the steps are forward.Batchers, so that each weight is read
// once for all of them. A forward that arrives while a pass runs waits for
// the next one; the goroutine that found no pass running leads: it runs
// passes until none is waiting, its own first. Nobody waits for a pass
// that is not yet due, so a lone sequence drafts as fast as alone.
type passes struct {
	mu      sync.Mutex
	running bool
	pending []*passRow
}

// passRow is one sequence's forward in a shared pass.
type passRow struct {
	row  forward.Rows
	err  error
	done chan struct{} // closed when row.Out or err is set
}

// forward processes tokens[start:] on step (which holds tokens[:start])
// and returns the logits after the last token, [n_vocab]float32, valid
// until step's next call.
func (p *passes) forward(seq forward.Sequence, tokens []int32, start int) ([]float32, error) {
	r := &passRow{row: forward.Rows{Sequence: seq, Start: start, Tokens: tokens[start:], Logits: true}, done: make(chan struct{})}
	p.mu.Lock()
	p.pending = append(p.pending, r)
	if p.running {
		p.mu.Unlock()
		<-r.done
		return r.row.Out, r.err
	}
	p.running = true
	for len(p.pending) > 0 {
		batch := p.pending
		p.pending = nil
		p.mu.Unlock()
		run(batch)
		p.mu.Lock()
	}
	p.running = false
	p.mu.Unlock()
	<-r.done
	return r.row.Out, r.err
}

// run runs batch in one Batch pass and wakes its rows.
func run(batch []*passRow) {
	rows := make([]forward.Rows, len(batch))
	for i, r := range batch {
		rows[i] = r.row
	}
	b, _ := rows[0].Sequence.(forward.Batcher)
	err := b.Batch(rows)
	for i, r := range batch {
		r.row.Out, r.err = rows[i].Out, rows[i].Err
		switch {
		case err != nil:
			r.err = fmt.Errorf("draft model: batched pass: %w", err)
		case r.err == nil && r.row.Out == nil:
			r.err = fmt.Errorf("draft model: batched pass gave no logits: %w", forward.ErrBadLogits)
		}
		close(r.done)
	}
}
