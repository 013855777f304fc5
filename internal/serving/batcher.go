package serving

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/realizar-host/realizar-host/engine"
	"github.com/realizar-host/realizar-host/forward"
)

// gatherWait is how long a pass waits, after the previous one, for the
// sequences it answered to come back with their next span. A sequence
// later than that (a slow plugin, a slow client) misses passes until it
// comes back; it never holds the others for longer.
const gatherWait = 10 * time.Millisecond

// prefillShare and promptShare bound the prompt rows a pass takes beside
// decoding sequences (see build): prefillShare per decoding sequence, or
// promptShare per waiting prompt when that is more.
//
// A pass's cost grows a little faster than its rows (the batched kernels'
// groups of four, the prompt's attention over its growing context): on
// the 1.1B fixture, 7 streams beside a 1,000-token prompt saw their p99
// gap at 3.3× their steady p50 with a prefillShare of 3/2 and 2.8× with 1
// (BENCHMARKS), so 1 it is, at the price of a later first token for the
// long prompt (53 s against 47 s).
//
// promptShare is for the other case, many new prompts beside few decoding
// sequences (every client of a load arriving at once, the first one
// already decoding): one prompt row per decoding sequence prefilled them
// one after another, a few rows a pass, for tens of passes (the 110M,
// 8 clients of 16-word prompts: a quarter of all passes held one or two
// decoding rows and seven prompt rows). Two rows per waiting prompt let
// them in within half as many passes; four gained the 110M 4% more
// tok/s but put its p99 gap at 50 ms against 40 (alternating rounds), and
// the 1.1B's ramp passes past llama-server's p99. A lone prompt beside
// two or more decoding sequences still gets prefillShare's rows.
const (
	prefillShare = 1
	promptShare  = 2
)

// batcher runs the passes: the decode tokens of every running sequence
// and chunks of new prompts, under a per-pass token budget, go through one
// forward.ForwardBatch, whose weights are read once for all rows. Each
// turn's goroutine drives its own engine.Run (policies, stop rules) and
// asks for its spans here, so the policy calls of a pass run concurrently,
// one goroutine per sequence.
//
// Its lock (mu) guards the pass's pending spans; passes run on one
// goroutine (loop).
type batcher struct {
	metrics     *Metrics
	batchTokens int
	onPass      func(PassStats)

	mu      sync.Mutex
	wake    chan struct{}
	closed  bool
	active  map[*sequence]struct{} // joined sequences
	pending []*sequence            // sequences waiting for a pass, in arrival order
	lastEnd time.Time              // when the last pass ended
	done    chan struct{}

	// A pass's spans and sequences, kept between passes so that a pass
	// allocates nothing of its own (build under mu, pass on the loop).
	spans       []forward.Span
	seqs        []*sequence
	prompts     []*sequence
	verifies    []*sequence
	batched     []forward.Span
	batchedSeqs []*sequence
	answers     []spanAnswer

	// gate decides whether a pass takes drafts (draftgate.go).
	gate draftGate
}

// spanAnswer is a span's result, sent once the pass has been counted.
type spanAnswer struct {
	q *sequence
	r spanResult
}

// PassStats describes one batched pass, for Config.OnPass.
type PassStats struct {
	Sequences int           // sequences with a span in the pass
	Rows      int           // token rows: decode tokens, drafts and prompt chunks
	Drafts    int           // rows of them that were drafts being verified
	Decode    bool          // every span was a decode (one token, or one and its drafts)
	Took      time.Duration // the pass's wall time
}

// sequence is one running turn's place in the batch.
type sequence struct {
	sl    *slot
	ctx   context.Context
	reply chan spanResult // cap 1
	// The span waiting for a pass (valid while pending). A verify span
	// is tokens[start] and drafts after it (engine.Run.NextDraft); the
	// pass may cut its drafts (build).
	tokens []int32
	start  int
	verify bool
	// drafts is the number of drafts the last pass verified for it
	// (0: none); its next span's start tells how many were accepted.
	drafts int
	// acc is its drafts' acceptance, for the gate.
	acc     acceptance
	took    time.Duration
	pending bool
	late    bool // missed the last pass: the next does not wait for it
}

// spanResult is a span's forward result.
type spanResult struct {
	logits []float32
	took   time.Duration
	err    error
}

// newBatcher starts the pass loop.
func newBatcher(mt *Metrics, batchTokens int, onPass func(PassStats)) *batcher {
	b := &batcher{metrics: mt, batchTokens: batchTokens, onPass: onPass,
		wake: make(chan struct{}, 1), active: map[*sequence]struct{}{}, done: make(chan struct{})}
	go b.loop()
	return b
}

// close stops the pass loop (after the running turns have ended).
func (b *batcher) close() {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	b.signal()
	<-b.done
}

func (b *batcher) signal() {
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// join adds a running turn's sequence to the batch.
func (b *batcher) join(ctx context.Context, sl *slot) *sequence {
	q := &sequence{sl: sl, ctx: ctx, reply: make(chan spanResult, 1)}
	b.mu.Lock()
	b.active[q] = struct{}{}
	b.mu.Unlock()
	return q
}

// leave takes q out of the batch.
func (b *batcher) leave(q *sequence) {
	b.mu.Lock()
	delete(b.active, q)
	b.mu.Unlock()
	b.signal()
}

// forward asks for tokens[start:] of q's sequence in the next passes and
// waits for the logits after the last token (a long prompt runs in chunks
// over several passes). With verify, tokens[start+1:] are drafts: the
// answer holds the logits after every row the pass took (the first row
// and as many drafts as it had room for, in order), as
// engine.Run.FeedRows takes them.
func (b *batcher) forward(q *sequence, tokens []int32, start int, verify bool) spanResult {
	b.mu.Lock()
	if q.drafts > 0 {
		// The turn kept the span's first row, its accepted drafts
		// and one chosen token: the new span starts at that token.
		b.gate.verified(&q.acc, q.drafts, start-q.start-1)
		q.drafts = 0
	}
	q.tokens, q.start, q.verify, q.took, q.pending, q.late = tokens, start, verify && len(tokens)-start > 1, 0, true, false
	b.pending = append(b.pending, q)
	b.mu.Unlock()
	b.signal()
	return <-q.reply
}

// drafting reports whether the next passes would take q's drafts as they
// run now (draftGate.allow with the joined sequences as the decoding ones), so
// that a turn does not compute drafts a full pass would cut. peeks says
// that q's drafter peeks (engine.DraftPeeker): beside other sequences it
// drafts only once it has peeked — a first span of drafts (a probe) after
// peeks that all hit, else after peekedFirst peeks and by its estimate —
// so that no draft is verified on no evidence.
func (b *batcher) drafting(q *sequence, peeks bool) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if peeks && len(b.active) >= 2 && (q.acc.peeks == 0 || q.acc.missed && q.acc.peeks < peekedFirst) {
		return false
	}
	// A first span is judged by its drafts (build): ask for them.
	return !q.acc.probed || b.gate.allow(len(b.active), q.acc, 0)
}

// peeked records a peek of q's drafter (engine.DraftPeeker) at a step
// without drafts: hit says the step chose the peeked token. It counts as
// a drafted token verified, accepted where hit, in q's acceptance and the
// pool's; after peekedFirst peeks of which one missed it stands for q's
// probe.
func (b *batcher) peeked(q *sequence, hit bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	accepted := 0
	if hit {
		accepted = 1
	}
	b.gate.verified(&q.acc, 1, accepted)
	q.acc.peeks++
	q.acc.missed = q.acc.missed || !hit
	if q.acc.missed && q.acc.peeks >= peekedFirst {
		q.acc.probed = true
	}
}

// loop runs passes until close.
func (b *batcher) loop() {
	defer close(b.done)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		b.mu.Lock()
		if b.closed {
			b.mu.Unlock()
			return
		}
		wait, ok := b.ready(time.Now())
		if !ok {
			b.mu.Unlock()
			if wait > 0 {
				timer.Reset(wait)
				select {
				case <-b.wake:
				case <-timer.C:
				}
				timer.Stop()
			} else {
				<-b.wake
			}
			continue
		}
		spans, seqs := b.build()
		b.mu.Unlock()
		b.pass(spans, seqs)
	}
}

// ready reports whether a pass should run now: something is pending and
// every sequence answered by the last pass has come back, or gatherWait
// has passed since it ended. Otherwise wait is how long to wait at most (0:
// until woken).
func (b *batcher) ready(now time.Time) (wait time.Duration, ok bool) {
	if len(b.pending) == 0 {
		return 0, false
	}
	for q := range b.active {
		if !q.pending && !q.late {
			if left := gatherWait - now.Sub(b.lastEnd); left > 0 {
				return left, false
			}
			return 0, true
		}
	}
	return 0, true
}

// build takes the pending spans into a pass under the token budget:
// decode tokens first (a verify span's first row among them), then
// chunks of prompts in arrival order, at most prefillShare prompt rows per
// decoding sequence (or promptShare per waiting prompt, when that is
// more) while sequences are decoding (a pass of prompts alone takes the
// whole budget), then the verify spans' drafts in arrival order while
// --batch-tokens has room (a span's drafts past it are cut: they are
// speculative, the rows before them are not). A
// sequence whose request has ended is answered at once with a
// cancellation (its run ends as cancelled, its slot forgets).
func (b *batcher) build() ([]forward.Span, []*sequence) {
	for q := range b.active {
		if !q.pending {
			q.late = true
		}
	}
	budget := b.batchTokens
	spans, seqs := b.spans[:0], b.seqs[:0]
	take := func(q *sequence, max int) {
		spans = append(spans, forward.Span{Fwd: q.sl.seqFwd, Tokens: q.tokens, Start: q.start, Max: max})
		seqs = append(seqs, q)
	}
	rest := b.pending[:0]
	prompts, verifies := b.prompts[:0], b.verifies[:0]
	for _, q := range b.pending {
		switch {
		case q.ctx.Err() != nil:
			q.pending = false
			q.reply <- spanResult{took: q.took, err: fmt.Errorf("%w: %w", engine.ErrCancelled, context.Cause(q.ctx))}
		case q.verify:
			verifies = append(verifies, q)
			budget--
		case q.sl.seqFwd == nil || len(q.tokens)-q.start <= 1:
			take(q, 0)
			budget--
		default:
			prompts = append(prompts, q)
		}
	}
	decodes := len(spans) + len(verifies)
	if decodes > 0 {
		// Beside running sequences a pass takes at most one prompt row
		// per decoding sequence, or two per waiting prompt when that
		// is more: a lone long prompt keeps the running sequences' time
		// between tokens under 3× (a pass's cost grows with its rows),
		// and many new prompts still join in few passes.
		budget = min(budget, max(prefillShare*decodes, promptShare*len(prompts)))
	}
	room := b.batchTokens - len(spans) - len(verifies)
	for _, q := range prompts {
		left := len(q.tokens) - q.start
		if len(spans) > 0 && (budget <= 0 || room < min(left, 2)) {
			rest = append(rest, q)
			continue
		}
		n := promptChunk(budget, left, room)
		take(q, n)
		budget -= n
		room -= n
	}
	for _, q := range verifies {
		drafts := min(len(q.tokens)-q.start-1, max(room, 0))
		if drafts > 0 {
			if !b.gate.allow(decodes, q.acc, drafts) {
				drafts = 0 // the pass is full enough: its decode row only
			}
			q.acc.probed = true
		}
		room -= drafts
		q.tokens = q.tokens[:q.start+1+drafts]
		q.drafts = drafts
		spans = append(spans, forward.Span{Fwd: q.sl.seqFwd, Tokens: q.tokens, Start: q.start, Verify: drafts > 0})
		seqs = append(seqs, q)
	}
	b.pending = rest
	b.spans, b.seqs, b.prompts, b.verifies = spans, seqs, prompts, verifies
	return spans, seqs
}

// promptChunk is the rows of a prompt with left rows to go that a pass
// takes, with budget rows of its prompt share and room rows under
// --batch-tokens left: the budget, at least one row and at most left and
// room, but never a chunk of one row or one row left for the next pass
// while two or more are left and room allows. A sequence's pass of two or
// more rows sums in llama.cpp's batch orders and a pass of one row in its
// one-token order (model.Sequence.Prefill), so chunks of two or more give
// every row the bits it gets when the prompt runs alone, whatever the
// chunking (with --batch-tokens of 3 or more).
func promptChunk(budget, left, room int) int {
	n := min(max(budget, 1), max(left, 1), max(room, 1))
	if left < 2 || room < 2 {
		return n
	}
	n = max(n, 2)
	if left-n == 1 {
		switch {
		case n > 2:
			n-- // two rows for the next pass
		case left <= room:
			n = left // three rows: all of them now
		}
	}
	return n
}

// pass runs one batched pass and answers the spans that reached their
// end; a prompt chunk that did not stays pending, resuming where its
// forward now holds. The pass is counted (metrics, onPass) before any of
// its spans is answered, so a turn ends after every pass it took part in
// was counted.
func (b *batcher) pass(spans []forward.Span, seqs []*sequence) {
	if len(spans) == 0 {
		return
	}
	t0 := time.Now()
	batched, batchedSeqs, answers := b.batched[:0], b.batchedSeqs[:0], b.answers[:0]
	defer func() { b.batched, b.batchedSeqs, b.answers = batched, batchedSeqs, answers }()
	for i, sp := range spans {
		if sp.Fwd != nil {
			batched = append(batched, sp)
			batchedSeqs = append(batchedSeqs, seqs[i])
			continue
		}
		// A forward that cannot join a batched pass runs alone.
		q := seqs[i]
		t := time.Now()
		var logits []float32
		var err error
		switch vf, ok := q.sl.fwd.(forward.Verifier); {
		case sp.Verify && ok:
			logits, err = vf.Verify(q.tokens, q.start)
		case sp.Verify: // the drafts stay unverified
			logits, err = q.sl.fwd.Forward(q.tokens[:q.start+1], q.start)
		default:
			logits, err = q.sl.fwd.Forward(q.tokens, q.start)
		}
		answers = append(answers, spanAnswer{q, spanResult{logits: logits, took: time.Since(t), err: err}})
	}
	rows, drafts, decode := 0, 0, true
	for _, sp := range batched {
		n := len(sp.Tokens) - sp.Start
		if sp.Max > 0 && !sp.Verify {
			n = min(n, sp.Max)
		}
		rows += n
		if sp.Verify {
			drafts += n - 1
			b.metrics.VerifyRows.Observe(float64(n))
		}
		decode = decode && (n == 1 || sp.Verify)
	}
	forward.ForwardBatch(batched)
	for i, sp := range batched {
		q := batchedSeqs[i]
		q.took += sp.Took
		if sp.Err != nil || sp.Logits != nil {
			answers = append(answers, spanAnswer{q, spanResult{logits: sp.Logits, took: q.took, err: sp.Err}})
			continue
		}
		b.mu.Lock()
		q.start = sp.Fwd.Held()
		b.pending = append(b.pending, q)
		b.mu.Unlock()
	}
	d := time.Since(t0)
	if len(batched) > 0 && len(batched) == len(spans) {
		// A pass of batched spans alone: its rows and its time.
		b.mu.Lock()
		b.gate.pass(rows, d)
		b.mu.Unlock()
	}
	b.metrics.PassSeconds.Observe(d.Seconds())
	b.metrics.PassSequences.Observe(float64(len(spans)))
	b.metrics.PassTokens.Observe(float64(rows + len(spans) - len(batched)))
	if b.onPass != nil {
		b.onPass(PassStats{Sequences: len(spans), Rows: rows + len(spans) - len(batched), Drafts: drafts, Decode: decode, Took: d})
	}
	for _, a := range answers {
		b.answer(a.q, a.r)
	}
	b.mu.Lock()
	b.lastEnd = time.Now()
	b.mu.Unlock()
}

// answer sends q its result.
func (b *batcher) answer(q *sequence, r spanResult) {
	b.mu.Lock()
	q.pending = false
	b.mu.Unlock()
	q.reply <- r
}
