package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/realizar-host/realizar-host/engine"
	"github.com/realizar-host/realizar-host/tokenizer"
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

// batcher runs the turns of admitted requests, each a sequence with a KV
// cache of its own, in shared batched passes (continuous batching): the
// decode tokens of every running sequence and chunks of new prompts, under
// a per-pass token budget, go through one engine.ForwardBatch, whose
// weights are read once for all rows. Each request's goroutine drives its
// own engine.Run (policies, stop rules, streaming), so the policy calls of
// a pass run concurrently, one goroutine per sequence (at most Parallel).
//
// It owns the KV slots: a sequence's Session over a forward of its own,
// kept idle after its turn (at most Slots of them, least recently used
// evicted) so that the same tenant's next request reuses its cached prefix.
// A slot never changes tenant. All KV caches together stay within the KV
// budget (KVMemory): idle slots are evicted first, then a request that
// does not fit is a 429 with Retry-After.
//
// Its lock (mu) guards the slots and the pass's pending spans; passes run
// on one goroutine (loop).
type batcher struct {
	model   *Model
	sched   *scheduler
	metrics *metrics

	parallel    int
	batchTokens int
	maxIdle     int
	kvBudget    int64 // bytes; 0: no budget
	kvPerPos    int64 // bytes of KV cache per position; 0: unknown

	mu      sync.Mutex
	wake    chan struct{}
	closed  bool
	active  map[*sequence]struct{} // joined sequences
	pending []*sequence            // sequences waiting for a pass, in arrival order
	idle    []*slot                // idle slots, least recently used first
	kvUsed  int64                  // bytes of every slot's KV cache
	first   *slot                  // the slot over Model.Forward, when NewForward is nil
	lastEnd time.Time              // when the last pass ended
	turns   uint64
	done    chan struct{}
	wg      sync.WaitGroup // turns in flight

	// A pass's spans and sequences, kept between passes so that a pass
	// allocates nothing of its own (build under mu, pass on the loop).
	spans       []engine.Span
	seqs        []*sequence
	prompts     []*sequence
	batched     []engine.Span
	batchedSeqs []*sequence
}

// slot is a Session over a forward of its own, holding one tenant's tokens.
type slot struct {
	tenant    string
	sess      *engine.Session
	fwd       engine.ArchForward
	step      *engine.StepForward // fwd, when it can join a batched pass; nil: alone
	positions int                 // KV positions reserved so far (a cache never shrinks)
	used      uint64
}

// sequence is one running turn's place in the batch.
type sequence struct {
	sl    *slot
	ctx   context.Context
	reply chan spanResult // cap 1
	// The span waiting for a pass (valid while pending).
	tokens  []int32
	start   int
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

// newBatcher starts the pass loop for m.
func newBatcher(m *Model, sched *scheduler, mt *metrics, cfg Config) *batcher {
	b := &batcher{model: m, sched: sched, metrics: mt, parallel: cfg.Parallel, batchTokens: cfg.BatchTokens,
		maxIdle: cfg.Slots, kvBudget: cfg.KVMemory, kvPerPos: m.KVBytesPerPosition,
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

// errKVBudget is a request that does not fit the KV budget now.
var errKVBudget = errors.New("server: KV cache budget exhausted")

// acquire returns a slot for a turn of tenant over positions positions:
// the tenant's most recently used idle slot, or a new one (a forward of its
// own over the same weights). A request without reuse, or a slot whose
// cached tokens another tenant left (only the lone slot without
// Model.NewForward), forgets them first, so no tenant's prompt shapes
// another's timing or text.
func (b *batcher) acquire(tenant string, reuse bool, positions int) (*slot, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.turns++
	var sl *slot
	for i := len(b.idle) - 1; i >= 0; i-- {
		if b.idle[i].tenant == tenant {
			sl = b.idle[i]
			b.idle = slices.Delete(b.idle, i, i+1)
			break
		}
	}
	if sl == nil && b.model.NewForward == nil {
		// One forward only (a GPU step): it passes from tenant to tenant.
		if b.first == nil {
			sess, err := engine.NewSession(b.model.Forward, b.model.Tokenizer.Renderer(tokenizer.RenderOptions{}))
			if err != nil {
				return nil, err
			}
			b.first = &slot{sess: sess, fwd: b.model.Forward}
			b.first.step, _ = b.model.Forward.(*engine.StepForward)
		} else if i := slices.Index(b.idle, b.first); i >= 0 {
			b.idle = slices.Delete(b.idle, i, i+1)
		}
		sl = b.first
		if sl.tenant != tenant {
			sl.sess.Forget()
		}
	}
	need := b.grow(sl, positions)
	for b.kvBudget > 0 && b.kvUsed+need > b.kvBudget && len(b.idle) > 0 {
		b.evict(0)
	}
	if b.kvBudget > 0 && b.kvUsed+need > b.kvBudget {
		if sl != nil {
			b.putIdle(sl)
		}
		return nil, errKVBudget
	}
	if sl == nil {
		fwd, err := b.model.NewForward()
		if err != nil {
			return nil, fmt.Errorf("a KV cache for tenant %s: %w", tenant, err)
		}
		sess, err := engine.NewSession(fwd, b.model.Tokenizer.Renderer(tokenizer.RenderOptions{}))
		if err != nil {
			return nil, err
		}
		sl = &slot{sess: sess, fwd: fwd}
		sl.step, _ = fwd.(*engine.StepForward)
	}
	b.kvUsed += need
	sl.positions = max(sl.positions, positions)
	sl.tenant, sl.used = tenant, b.turns
	if !reuse {
		sl.sess.Forget()
	}
	return sl, nil
}

// grow is the KV bytes sl (nil: a new slot) needs beyond what it has for
// positions.
func (b *batcher) grow(sl *slot, positions int) int64 {
	have := 0
	if sl != nil {
		have = sl.positions
	}
	return int64(max(positions-have, 0)) * b.kvPerPos
}

// putIdle keeps sl idle (most recently used last), evicting the least
// recently used beyond maxIdle.
func (b *batcher) putIdle(sl *slot) {
	b.idle = append(b.idle, sl)
	for len(b.idle) > b.maxIdle {
		b.evict(0)
	}
}

// evict drops idle slot i and its KV cache.
func (b *batcher) evict(i int) {
	sl := b.idle[i]
	b.idle = slices.Delete(b.idle, i, i+1)
	if sl == b.first {
		sl.sess.Forget() // the lone forward stays; its tokens go
		return
	}
	b.kvUsed -= int64(sl.positions) * b.kvPerPos
	_ = sl.sess.Close()
	if c, ok := sl.fwd.(io.Closer); ok {
		_ = c.Close() // a GPU sequence's KV cache lives in device memory
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

// leave takes q out of the batch and keeps its slot idle.
func (b *batcher) leave(q *sequence) {
	b.mu.Lock()
	delete(b.active, q)
	b.putIdle(q.sl)
	b.mu.Unlock()
	b.signal()
}

// forward asks for tokens[start:] of q's sequence in the next passes and
// waits for the logits after the last token (a long prompt runs in chunks
// over several passes).
func (b *batcher) forward(q *sequence, tokens []int32, start int) spanResult {
	b.mu.Lock()
	q.tokens, q.start, q.took, q.pending, q.late = tokens, start, 0, true, false
	b.pending = append(b.pending, q)
	b.mu.Unlock()
	b.signal()
	return <-q.reply
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
// decode tokens first, then chunks of prompts in arrival order, at most
// prefillShare prompt rows per decoding sequence (or promptShare per
// waiting prompt, when that is more) while sequences are decoding (a pass
// of prompts alone takes the whole budget). A
// sequence whose request has ended is answered at once with a
// cancellation (its run ends as cancelled, its slot forgets).
func (b *batcher) build() ([]engine.Span, []*sequence) {
	for q := range b.active {
		if !q.pending {
			q.late = true
		}
	}
	budget := b.batchTokens
	spans, seqs := b.spans[:0], b.seqs[:0]
	take := func(q *sequence, max int) {
		spans = append(spans, engine.Span{Fwd: q.sl.step, Tokens: q.tokens, Start: q.start, Max: max})
		seqs = append(seqs, q)
	}
	rest := b.pending[:0]
	prompts := b.prompts[:0]
	for _, q := range b.pending {
		switch {
		case q.ctx.Err() != nil:
			q.pending = false
			q.reply <- spanResult{took: q.took, err: fmt.Errorf("%w: %w", engine.ErrCancelled, context.Cause(q.ctx))}
		case q.sl.step == nil || len(q.tokens)-q.start <= 1:
			take(q, 0)
			budget--
		default:
			prompts = append(prompts, q)
		}
	}
	if decodes := len(spans); decodes > 0 {
		// Beside running sequences a pass takes at most one prompt row
		// per decoding sequence, or two per waiting prompt when that
		// is more: a lone long prompt keeps the running sequences' time
		// between tokens under 3× (a pass's cost grows with its rows),
		// and many new prompts still join in few passes.
		budget = min(budget, max(prefillShare*decodes, promptShare*len(prompts)))
	}
	room := b.batchTokens - len(spans)
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
	b.pending = rest
	b.spans, b.seqs, b.prompts = spans, seqs, prompts
	return spans, seqs
}

// promptChunk is the rows of a prompt with left rows to go that a pass
// takes, with budget rows of its prompt share and room rows under
// --batch-tokens left: the budget, at least one row and at most left and
// room, but never a chunk of one row or one row left for the next pass
// while two or more are left and room allows. A sequence's pass of two or
// more rows sums in llama.cpp's batch orders and a pass of one row in its
// one-token order (model.Step.Prefill), so chunks of two or more give
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
// forward now holds.
func (b *batcher) pass(spans []engine.Span, seqs []*sequence) {
	if len(spans) == 0 {
		return
	}
	t0 := time.Now()
	batched, batchedSeqs := b.batched[:0], b.batchedSeqs[:0]
	defer func() { b.batched, b.batchedSeqs = batched, batchedSeqs }()
	for i, sp := range spans {
		if sp.Fwd != nil {
			batched = append(batched, sp)
			batchedSeqs = append(batchedSeqs, seqs[i])
			continue
		}
		// A forward that cannot join a batched pass runs alone.
		q := seqs[i]
		t := time.Now()
		logits, err := q.sl.fwd.Forward(q.tokens, q.start)
		b.answer(q, spanResult{logits: logits, took: time.Since(t), err: err})
	}
	rows := 0
	for _, sp := range batched {
		n := len(sp.Tokens) - sp.Start
		if sp.Max > 0 {
			n = min(n, sp.Max)
		}
		rows += n
	}
	engine.ForwardBatch(batched)
	for i, sp := range batched {
		q := batchedSeqs[i]
		q.took += sp.Took
		if sp.Err != nil || sp.Logits != nil {
			b.answer(q, spanResult{logits: sp.Logits, took: q.took, err: sp.Err})
			continue
		}
		b.mu.Lock()
		q.start = sp.Fwd.Held()
		b.pending = append(b.pending, q)
		b.mu.Unlock()
	}
	d := time.Since(t0)
	b.metrics.passSeconds.Observe(d.Seconds())
	b.metrics.passSequences.Observe(float64(len(spans)))
	b.metrics.passTokens.Observe(float64(rows + len(spans) - len(batched)))
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

// kvError is the API error of a request that does not fit the KV budget.
func (b *batcher) kvError(positions int) *APIError {
	need := int64(positions) * b.kvPerPos
	if need > b.kvBudget {
		return badRequest("max_tokens", "the request needs %d KV positions (%d MiB); the server's KV budget is %d MiB",
			positions, need>>20, b.kvBudget>>20)
	}
	return &APIError{Status: http.StatusTooManyRequests, Type: typeRateLimit, Code: "kv_cache_full",
		RetryAfter: b.sched.retryAfter(), Message: "the server's KV cache memory is in use; retry later"}
}
