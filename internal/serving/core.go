package serving

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/realizar-host/realizar-host/engine"
	"github.com/realizar-host/realizar-host/forward"
)

// DefaultParallel and DefaultBatchTokens are Config's defaults, measured as
// the best on the project's 2-core test machine (BENCHMARKS.md);
// DefaultQueue is the queue's default size.
const (
	DefaultParallel    = 8
	DefaultBatchTokens = 64
	DefaultQueue       = 64
)

// KVDrafter is a GenerateConfig.Draft that holds a KV cache of its own
// for the turn (a draft model's, draft.ModelDrafter): the core charges
// its bytes beside the turn's own, to Config.KVMemory and the tenant's
// Shares.KVBytes, from the turn's start to its end. A drafter whose cache
// outlives the turn (run's, chat's) is its owner's to count.
type KVDrafter interface {
	engine.Drafter
	// ReserveKV sizes the cache for a turn of positions positions (its
	// prompt and budget) and returns the most bytes it then holds.
	ReserveKV(positions int) int64
}

// Model is what the core generates with.
type Model struct {
	// Forward is the model's first forward (its context length is the
	// core's); without NewForward it is the only one, and turns take
	// turns on it.
	Forward forward.ArchForward
	// NewForward, when set, makes a further forward over the same weights
	// with a KV cache of its own: one per running sequence and per idle
	// slot. Forwards that are *forward.SequenceForward over steps implementing
	// forward.Batcher decode together in one batched pass.
	NewForward func() (forward.ArchForward, error)
	// KVBytesPerPosition is one position's KV cache across all layers, in
	// bytes, for the KV budget; 0 means unknown (no budget is enforced).
	KVBytesPerPosition int64
	// Vocab renders the text of a turn that sets no Pieces.
	Vocab engine.Vocab
}

// Config is the core's sizes and hooks. The zero value is usable.
type Config struct {
	// Parallel is the most sequences decoding together (the places of
	// the batch); 0 means DefaultParallel. Without Model.NewForward it is 1.
	Parallel int
	// BatchTokens is the most token rows one pass processes; 0 means
	// DefaultBatchTokens.
	BatchTokens int
	// Queue is the most requests admitted and not yet running that the
	// tenants share (see Shares.Queued); 0 means DefaultQueue.
	Queue int
	// Slots is how many idle KV caches are kept after their turns, each
	// holding one tenant's last tokens for its next request; 0 means
	// Parallel.
	Slots int
	// KVMemory caps the bytes of all KV caches together (running and
	// idle, and the caches of the running turns' draft models, KVDrafter);
	// 0 means no cap. Needs Model.KVBytesPerPosition.
	KVMemory int64
	// Shares is each tenant's share of places, queue and KV budget; nil
	// means every tenant may use all of them.
	Shares func(tenant string) Shares
	// Metrics receives the core's series; nil means unregistered ones.
	Metrics *Metrics
	// PluginFailure names a policy failure's kind for
	// Metrics.PluginFailures; nil means "other".
	PluginFailure func(error) string
	// OnPass, when set, is called after each batched pass, on the pass
	// loop's goroutine, before the pass's spans are answered: once a
	// turn's Result returns, every pass it took part in has been reported.
	OnPass func(PassStats)
}

// Core owns the sequences of one model: admission, the queue, the places
// of the batch, the KV slots and budget, and the passes. Create it with
// New; Close it once no turn runs. Safe for concurrent use.
type Core struct {
	model  Model
	cfg    Config
	m      *Metrics
	sched  *scheduler
	batch  *batcher
	ctxLen int

	base     context.Context // cancelled by CancelAll
	cancel   context.CancelCauseFunc
	wg       sync.WaitGroup // turns started and not finished
	firstMu  sync.Mutex     // guards making the lone forward's slot
	closedMu sync.Mutex
	closed   bool
}

// New starts a core over m. A negative size is an error.
func New(m Model, cfg Config) (*Core, error) {
	if m.Forward == nil || m.Vocab == nil {
		return nil, errors.New("serving: Model needs Forward and Vocab")
	}
	if cfg.Parallel < 0 || cfg.BatchTokens < 0 || cfg.Queue < 0 || cfg.Slots < 0 || cfg.KVMemory < 0 {
		return nil, fmt.Errorf("serving: Parallel %d, BatchTokens %d, Queue %d, Slots %d, KVMemory %d: none may be negative",
			cfg.Parallel, cfg.BatchTokens, cfg.Queue, cfg.Slots, cfg.KVMemory)
	}
	if cfg.Parallel == 0 {
		cfg.Parallel = DefaultParallel
	}
	if m.NewForward == nil {
		cfg.Parallel = 1
	}
	if cfg.BatchTokens == 0 {
		cfg.BatchTokens = DefaultBatchTokens
	}
	if cfg.Queue == 0 {
		cfg.Queue = DefaultQueue
	}
	if cfg.Slots == 0 {
		cfg.Slots = cfg.Parallel
	}
	if cfg.Metrics == nil {
		cfg.Metrics = NewMetrics()
	}
	budget := cfg.KVMemory
	if m.KVBytesPerPosition <= 0 {
		budget = 0
	}
	c := &Core{model: m, cfg: cfg, m: cfg.Metrics, ctxLen: m.Forward.ContextLength()}
	c.base, c.cancel = context.WithCancelCause(context.Background())
	c.sched = newScheduler(cfg.Parallel, cfg.Queue, cfg.Slots, budget, m.KVBytesPerPosition, m.NewForward == nil, cfg.Shares)
	c.batch = newBatcher(c.m, cfg.BatchTokens, cfg.OnPass)
	return c, nil
}

// Parallel is the places of the batch.
func (c *Core) Parallel() int { return c.cfg.Parallel }

// Queued is the number of turns waiting for a place.
func (c *Core) Queued() int { return c.sched.queued() }

// Held is the number of places tenant holds now.
func (c *Core) Held(tenant string) int { return c.sched.Held(tenant) }

// KVUsed is the bytes of every KV cache the core holds (running, idle and
// being made, and the running turns' draft models' caches), as counted
// against Config.KVMemory.
func (c *Core) KVUsed() int64 {
	c.sched.mu.Lock()
	defer c.sched.mu.Unlock()
	return c.sched.kvUsed
}

// CancelAll cancels every turn started or waiting, with cause (their
// Results report it); later turns start as usual.
func (c *Core) CancelAll(cause error) {
	c.closedMu.Lock()
	cancel := c.cancel
	c.base, c.cancel = context.WithCancelCause(context.Background())
	c.closedMu.Unlock()
	cancel(cause)
}

// Wait blocks until no turn runs.
func (c *Core) Wait() { c.wg.Wait() }

// Close waits for the running turns, stops the passes and closes the
// idle KV caches. Turns started after it fail with ErrClosed.
func (c *Core) Close() {
	c.closedMu.Lock()
	c.closed = true
	c.closedMu.Unlock()
	c.wg.Wait()
	c.batch.close()
	c.sched.mu.Lock()
	idle := c.sched.idle
	c.sched.idle = nil
	c.sched.mu.Unlock()
	closeSlots(idle)
}

// Ticket is an admitted request's entry in its tenant's share of the
// queue, held while the caller prepares it. Start it, or Release it.
type Ticket struct {
	c      *Core
	tenant string
	used   atomic.Bool
}

// Admit reserves an entry in tenant's share of the queue, before any
// costly work. A full share, or a full queue of which the tenant holds an
// equal share, is a *Refused with Retry-After.
func (c *Core) Admit(tenant string) (*Ticket, error) {
	if err := c.sched.admit(tenant, time.Now()); err != nil {
		return nil, err
	}
	return &Ticket{c: c, tenant: tenant}, nil
}

// Release gives an unstarted ticket's entry back; after Start, or a
// second time, it does nothing.
func (t *Ticket) Release() {
	if t.used.CompareAndSwap(false, true) {
		t.c.sched.unreserve(t.tenant)
	}
}

// Request is one turn to run.
type Request struct {
	// Prompt is the turn's tokens; it must be shorter than the context.
	Prompt []int32
	// MaxTokens is the turn's budget; 0 means until the context ends.
	MaxTokens int
	// CachePrompt reuses the tenant's previous KV prefix, if it holds one.
	CachePrompt bool
	// Stream buffers the turn's text and logprobs as Events for Next; a
	// turn without it has them only in its Result.
	Stream bool
	// Generate is the turn's settings: sampler, stop policy, seed,
	// logprobs, rendering. The core sets MaxTokens, Cancel, OnToken and
	// OnLogprobs.
	Generate engine.GenerateConfig
}

// Event is a streamed turn's output, in order: a token's logprobs (with
// Request.Generate.Logprobs), or text released by the stop policy.
type Event struct {
	Text     []byte
	Logprobs *engine.StepLogprobs
}

// Result is a finished turn, how long it waited for a place (from Start)
// and how long it held it.
type Result struct {
	Turn  engine.Turn
	Queue time.Duration
	Held  time.Duration
}

// Turn is a started turn. Its output is buffered: the core never waits for
// the reader. The buffer holds at most the turn's text and logprobs
// (bounded by its budget).
type Turn struct {
	cancel context.CancelCauseFunc
	signal chan struct{} // cap 1: events or the end arrived
	done   chan struct{}

	mu     sync.Mutex
	events []Event
	res    Result
	err    error
}

// Start runs req as the ticket's turn, on a goroutine of the core's: it
// waits for a place within its tenant's shares, then generates. ctx (and
// Cancel, and CancelAll) cancel the wait and the turn. A prompt that
// fills the context (ErrPromptTooLong) or a turn that can never fit the
// tenant's KV share (*TooLarge) is an error here, and the ticket is
// released.
func (t *Ticket) Start(ctx context.Context, req Request) (*Turn, error) {
	c := t.c
	if !t.used.CompareAndSwap(false, true) {
		return nil, errors.New("serving: ticket used twice")
	}
	if len(req.Prompt) >= c.ctxLen {
		c.sched.unreserve(t.tenant)
		return nil, &PromptTooLong{Tokens: len(req.Prompt), Context: c.ctxLen}
	}
	maxTokens := req.MaxTokens
	if maxTokens == 0 {
		// Until the context ends: a budget one past the room, so that a
		// turn the context stops says so (stop_reason "context"), as one
		// whose budget asks for more than fits does.
		maxTokens = c.ctxLen - len(req.Prompt) + 1
	}
	positions := min(len(req.Prompt)+maxTokens, c.ctxLen)
	var draft int64
	if kd, ok := req.Generate.Draft.(KVDrafter); ok && c.sched.kvPerPos > 0 {
		draft = kd.ReserveKV(positions)
	}
	if s := c.sched; s.kvBudget > 0 {
		need, share := int64(positions)*s.kvPerPos+draft, s.sharesOf(t.tenant).KVBytes
		if need > share {
			s.unreserve(t.tenant)
			return nil, &TooLarge{Positions: positions, Need: need, Draft: draft, Share: share}
		}
	}
	c.closedMu.Lock()
	closed, base := c.closed, c.base
	if !closed {
		c.wg.Add(1)
	}
	c.closedMu.Unlock()
	if closed {
		c.sched.unreserve(t.tenant)
		return nil, ErrClosed
	}
	tctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(base, func() { cancel(context.Cause(base)) })
	turn := &Turn{cancel: cancel, signal: make(chan struct{}, 1), done: make(chan struct{})}
	go func() {
		defer c.wg.Done()
		defer stop()
		defer cancel(nil)
		res, err := c.run(tctx, turn, t.tenant, req, maxTokens, &waiter{tenant: t.tenant, positions: positions, draft: draft, ready: make(chan struct{})})
		turn.finish(res, err)
	}()
	return turn, nil
}

// Cancel ends the turn with cause (its Result's error), whether it waits
// or runs; its place and KV free at the next pass.
func (t *Turn) Cancel(cause error) { t.cancel(cause) }

// Done is closed when the turn has ended and freed its place.
func (t *Turn) Done() <-chan struct{} { return t.done }

// Next waits for output and returns what is buffered (appended to buf);
// more is false once the turn has ended and everything was returned.
func (t *Turn) Next(buf []Event) (events []Event, more bool) {
	for {
		t.mu.Lock()
		if len(t.events) > 0 {
			buf = append(buf, t.events...)
			clear(t.events)
			t.events = t.events[:0]
			t.mu.Unlock()
			return buf, true
		}
		t.mu.Unlock()
		select {
		case <-t.signal:
		case <-t.done:
			t.mu.Lock()
			n := len(t.events)
			t.mu.Unlock()
			if n == 0 {
				return buf, false
			}
		}
	}
}

// Result waits for the turn's end and returns it.
func (t *Turn) Result() (Result, error) {
	<-t.done
	return t.res, t.err
}

func (t *Turn) push(e Event) {
	t.mu.Lock()
	t.events = append(t.events, e)
	t.mu.Unlock()
	select {
	case t.signal <- struct{}{}:
	default:
	}
}

func (t *Turn) finish(res Result, err error) {
	t.res, t.err = res, err
	close(t.done)
}

// run waits for a place, takes a KV slot and drives the turn: its spans go
// through the shared passes, its policies run on this goroutine. Every
// end goes through here: the place and the KV reservation are released
// and the metrics counted once.
func (c *Core) run(ctx context.Context, t *Turn, tenant string, req Request, maxTokens int, w *waiter) (Result, error) {
	queued := time.Now()
	g, closing, err := c.sched.wait(ctx, w)
	closeSlots(closing)
	if err != nil {
		return Result{Queue: time.Since(queued)}, fmt.Errorf("%w: %w", engine.ErrCancelled, err)
	}
	granted := time.Now()
	res := Result{Queue: granted.Sub(queued)}
	c.m.QueueWait.WithLabelValues(tenant).Observe(res.Queue.Seconds())
	c.m.Active.Inc()
	defer c.m.Active.Dec()

	sl, err := c.slotFor(g)
	if err != nil {
		closeSlots(c.sched.release(g, nil, false))
		return res, err
	}
	if !req.CachePrompt {
		sl.sess.Forget()
	}
	afterCancel := 0 // tokens completed after ctx ended
	cfg := req.Generate
	cfg.MaxTokens, cfg.Cancel = maxTokens, engine.FromContext(ctx)
	cfg.OnToken = func(id int32, text []byte) error {
		if ctx.Err() != nil {
			if id != engine.NoToken {
				afterCancel++
			}
			return nil
		}
		if req.Stream && len(text) > 0 {
			t.push(Event{Text: bytes.Clone(text)})
		}
		return nil
	}
	cfg.OnLogprobs = nil
	if req.Stream {
		cfg.OnLogprobs = func(st engine.StepLogprobs) { t.push(Event{Logprobs: &st}) }
	}
	start := time.Now()
	turn, gerr := c.generate(ctx, sl, req.Prompt, cfg)
	c.sched.observeTurn(time.Since(start))
	res.Turn, res.Held = turn, time.Since(granted)
	c.observe(tenant, turn, gerr, afterCancel)
	closeSlots(c.sched.release(g, sl, false))
	if gerr != nil {
		var pe *engine.PolicyError
		if errors.As(gerr, &pe) {
			return res, gerr
		}
		return res, fmt.Errorf("generate: %w", gerr)
	}
	if turn.Stop == engine.StopCancelled || turn.Stop == engine.StopCallback {
		return res, turn.Cause
	}
	return res, nil
}

// slotFor is g's slot, made when g holds none: a forward of its own over
// the same weights (or the lone forward's Session).
func (c *Core) slotFor(g grant) (*slot, error) {
	if g.sl != nil {
		return g.sl, nil
	}
	if c.model.NewForward == nil {
		c.firstMu.Lock()
		defer c.firstMu.Unlock()
		sess, err := engine.NewSession(c.model.Forward, c.model.Vocab)
		if err != nil {
			return nil, err
		}
		sl := &slot{sess: sess, fwd: c.model.Forward, positions: g.positions}
		sl.seqFwd, _ = c.model.Forward.(*forward.SequenceForward)
		c.sched.mu.Lock()
		c.sched.first = sl
		c.sched.mu.Unlock()
		return sl, nil
	}
	fwd, err := c.model.NewForward()
	if err != nil {
		return nil, fmt.Errorf("a KV cache for tenant %s: %w", g.tenant, err)
	}
	sess, err := engine.NewSession(fwd, c.model.Vocab)
	if err != nil {
		if cl, ok := fwd.(interface{ Close() error }); ok {
			_ = cl.Close()
		}
		return nil, err
	}
	sl := &slot{sess: sess, fwd: fwd, positions: g.positions}
	sl.seqFwd, _ = fwd.(*forward.SequenceForward)
	return sl, nil
}

// generate is Session.Generate with the forwards going through the
// batcher's passes: Begin, then each span NextDraft asks for (a verify
// span when the turn has a drafter, GenerateConfig.Draft) waits for a
// pass, and FeedRows runs the decode steps on this goroutine.
func (c *Core) generate(ctx context.Context, sl *slot, prompt []int32, cfg engine.GenerateConfig) (engine.Turn, error) {
	run, err := sl.sess.Begin(prompt, cfg)
	if err != nil {
		return engine.Turn{}, err
	}
	q := c.batch.join(ctx, sl)
	peeker, _ := cfg.Draft.(engine.DraftPeeker)
	next := func() ([]int32, int, bool) {
		if cfg.Draft != nil && c.batch.drafting(q, peeker != nil) {
			return run.NextDraft()
		}
		return run.Next() // no drafter, or passes full enough to cut its drafts: none asked for
	}
	// A decode step without drafts peeks at what the drafter would have
	// drafted first and, at the next span, tells the gate whether the step
	// chose it: the sequence's acceptance, measured at no forward cost.
	var peeked int32
	peeking := false
	for tokens, start, ok := next(); ok; tokens, start, ok = next() {
		decode := len(tokens)-start == 1
		if peeking && decode {
			c.batch.peeked(q, tokens[start] == peeked)
		}
		peeking = false
		if peeker != nil && decode {
			peeked, peeking = peeker.Peek(tokens)
		}
		r := c.batch.forward(q, tokens, start, run.Drafts() > 0)
		run.FeedRows(r.logits, r.took, r.err)
	}
	turn, err := run.Result()
	c.batch.leave(q)
	return turn, err
}

// observe records a turn's metrics.
func (c *Core) observe(tenant string, turn engine.Turn, err error, afterCancel int) {
	m := c.m
	m.Tokens.WithLabelValues(tenant).Add(float64(turn.Generated))
	if d := turn.Drafts; d.Drafted > 0 {
		m.DraftTokens.WithLabelValues(tenant).Add(float64(d.Drafted))
		m.AcceptedDraftTokens.WithLabelValues(tenant).Add(float64(d.Accepted))
	}
	tm := turn.Timings
	if tm.PrefillTokens > 0 && tm.Prefill > 0 {
		m.PrefillRate.Observe(float64(tm.PrefillTokens) / tm.Prefill.Seconds())
	}
	if tm.DecodeForwards > 0 && tm.Decode > 0 {
		m.DecodeRate.Observe(float64(tm.DecodeForwards) / tm.Decode.Seconds())
	}
	if turn.Generated > 0 {
		m.PolicyPerStep.Observe(tm.Policies.Seconds() / float64(turn.Generated))
	}
	var pe *engine.PolicyError
	if err != nil && errors.As(err, &pe) {
		kind := "other"
		if c.cfg.PluginFailure != nil {
			kind = c.cfg.PluginFailure(err)
		}
		m.PluginFailures.WithLabelValues(tenant, kind).Inc()
	}
	if turn.Stop == engine.StopCancelled {
		m.Cancelled.Inc()
		m.CancelPolls.Observe(float64(afterCancel))
	}
}
