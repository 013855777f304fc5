package server

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/realizar-host/realizar-host/engine"
)

// turnRequest is one admitted request's turn.
type turnRequest struct {
	tenant      *Tenant
	prompt      []int32
	maxTokens   int // 0: until end of generation or the context ends
	seed        *uint64
	logprobs    bool
	topLogprobs int
	pol         *policies
	cachePrompt bool // reuse the previous request's KV prefix, if it was this tenant's
	ignoreEOS   bool // llama.cpp's ignore_eos: mask end-of-generation ids
	// pieces renders the turn's text (Server.turnPieces); nil: the
	// Session's, which hides control tokens.
	pieces engine.Pieces
	// onText, when set, receives released text as it is generated.
	onText func(text []byte) error
	// onLogprobs, when set with logprobs, receives each step's logprobs
	// before onText gets the text released with that step (if any).
	onLogprobs func(engine.StepLogprobs)
}

// turnResult is a finished turn, how long it waited for a place in the
// batch and how long it held it.
type turnResult struct {
	turn  engine.Turn
	queue time.Duration
	held  time.Duration
}

// run waits for a place in the batch (round-robin across tenants, at most
// the tenant's max_sequences), takes a KV slot, and drives the turn: its
// spans go through the shared passes, its policies run on this goroutine.
// The request's context cancels the wait and the turn.
func (b *batcher) run(ctx context.Context, req turnRequest) (turnResult, error) {
	queued := time.Now()
	release, err := b.sched.Acquire(ctx, req.tenant.Name)
	if err != nil {
		return turnResult{}, err
	}
	defer release()
	granted := time.Now()
	res := turnResult{queue: granted.Sub(queued)}
	b.metrics.queueWait.WithLabelValues(req.tenant.Name).Observe(res.queue.Seconds())
	b.wg.Add(1)
	defer b.wg.Done()
	b.metrics.active.Inc()
	defer b.metrics.active.Dec()

	ctxLen := b.model.Forward.ContextLength()
	if len(req.prompt) >= ctxLen {
		return res, badRequest("prompt", "the prompt is %d tokens; the context holds %d: %v", len(req.prompt), ctxLen,
			engine.ErrContextExceeded)
	}
	maxTokens := req.maxTokens
	if maxTokens == 0 {
		// Until the context ends: a budget one past the room, so that a
		// turn the context stops says so (stop_reason "context"), as one
		// whose max_tokens asks for more than fits does.
		maxTokens = ctxLen - len(req.prompt) + 1
	}
	positions := min(len(req.prompt)+maxTokens, ctxLen)
	sl, err := b.acquire(req.tenant.Name, req.cachePrompt, positions)
	if errors.Is(err, errKVBudget) {
		return res, b.kvError(positions)
	}
	if err != nil {
		return res, err
	}
	afterCancel := 0 // tokens completed after ctx ended
	cfg := engine.GenerateConfig{
		MaxTokens: maxTokens, Seed: req.seed, Logprobs: req.logprobs, TopLogprobs: req.topLogprobs,
		IgnoreEOG: req.ignoreEOS, Cancel: engine.FromContext(ctx), Sampler: req.pol.sampler, Stop: req.pol.stop,
		OnLogprobs: req.onLogprobs, Pieces: req.pieces,
		OnToken: func(id int32, text []byte) error {
			if ctx.Err() != nil {
				if id != engine.NoToken {
					afterCancel++
				}
				return nil
			}
			if req.onText != nil && len(text) > 0 {
				return req.onText(text)
			}
			return nil
		},
	}
	start := time.Now()
	turn, err := b.generate(ctx, sl, req.prompt, cfg)
	b.sched.observeTurn(time.Since(start))
	res.turn, res.held = turn, time.Since(granted)
	b.observe(req.tenant, turn, err, afterCancel)
	if err != nil {
		var pe *engine.PolicyError
		if errors.As(err, &pe) {
			return res, err
		}
		return res, fmt.Errorf("generate: %w", err)
	}
	if turn.Stop == engine.StopCancelled || turn.Stop == engine.StopCallback {
		return res, turn.Cause
	}
	return res, nil
}

// generate is Session.Generate with the forwards going through the
// batcher's passes: Begin, then each span Next asks for waits for a pass,
// and Feed runs the decode step on this goroutine.
func (b *batcher) generate(ctx context.Context, sl *slot, prompt []int32, cfg engine.GenerateConfig) (engine.Turn, error) {
	run, err := sl.sess.Begin(prompt, cfg)
	if err != nil {
		b.mu.Lock()
		b.putIdle(sl)
		b.mu.Unlock()
		return engine.Turn{}, err
	}
	q := b.join(ctx, sl)
	for tokens, start, ok := run.Next(); ok; tokens, start, ok = run.Next() {
		r := b.forward(q, tokens, start)
		run.Feed(r.logits, r.took, r.err)
	}
	turn, err := run.Result()
	b.leave(q)
	return turn, err
}

// observe records a turn's metrics.
func (b *batcher) observe(t *Tenant, turn engine.Turn, err error, afterCancel int) {
	m := b.metrics
	m.tokens.WithLabelValues(t.Name).Add(float64(turn.Generated))
	tm := turn.Timings
	if tm.PrefillTokens > 0 && tm.Prefill > 0 {
		m.prefillRate.Observe(float64(tm.PrefillTokens) / tm.Prefill.Seconds())
	}
	if tm.DecodeForwards > 0 && tm.Decode > 0 {
		m.decodeRate.Observe(float64(tm.DecodeForwards) / tm.Decode.Seconds())
	}
	if turn.Generated > 0 {
		m.policyPerStep.Observe(tm.Policies.Seconds() / float64(turn.Generated))
	}
	if err != nil {
		var pe *engine.PolicyError
		if errors.As(err, &pe) {
			m.pluginFailures.WithLabelValues(t.Name, pluginFailureKind(err)).Inc()
		}
	}
	if turn.Stop == engine.StopCancelled {
		m.cancelled.Inc()
		m.cancelPolls.Observe(float64(afterCancel))
	}
}

// finishReason is OpenAI's finish_reason for a stop: "length" when the
// budget or the context ran out, else "stop".
func finishReason(r engine.StopReason) string {
	if r == engine.StopMaxTokens || r == engine.StopContext {
		return "length"
	}
	return "stop"
}

// realizarOf is the response's realizar extension.
func realizarOf(res turnResult, pol *policies) *realizarResponse {
	t := res.turn.Timings
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	return &realizarResponse{Seed: int64(res.turn.Seed), StopReason: res.turn.Stop.String(), Policies: pol.names,
		QueueMs: ms(res.queue), PrefillMs: ms(t.Prefill), DecodeMs: ms(t.Decode), PoliciesMs: ms(t.Policies),
		ReusedTokens: res.turn.Reused}
}
