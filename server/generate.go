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
	// onText, when set, receives released text as it is generated.
	onText func(text []byte) error
	// onLogprobs, when set with logprobs, receives each step's logprobs
	// before onText gets the text released with that step (if any).
	onLogprobs func(engine.StepLogprobs)
}

// turnResult is a finished turn, how long it waited for the model and how
// long it held it.
type turnResult struct {
	turn  engine.Turn
	queue time.Duration
	held  time.Duration
}

// slot is a Session over a forward of its own, holding one tenant's tokens.
type slot struct {
	tenant string
	sess   *engine.Session
	used   uint64 // the turn that last used it
}

// session returns the Session a turn of tenant runs on (the scheduler hands
// the model to one request at a time). A Session keeps the tokens its
// forward holds, so a request reuses the KV cache of the longest prefix it
// shares with that tenant's previous request (a chat's earlier messages),
// when reuse is asked for. A tenant gets its own slot while there are free
// ones (Config.Slots), else the least recently used; a slot that changes
// tenant, or a request without reuse, forgets and starts from position 0,
// so no tenant's prompt shapes another's timing. On the CPU forward a
// batched prefill equals per-token steps bit for bit, so reuse does not
// change the text. Call only while holding the scheduler.
func (s *Server) session(tenant string, reuse bool) (*engine.Session, error) {
	s.turns++
	var sl *slot
	for _, x := range s.slots {
		if x.tenant == tenant {
			sl = x
			break
		}
	}
	if sl == nil {
		if len(s.slots) < s.maxSlots && (len(s.slots) == 0 || s.model.NewForward != nil) {
			fwd := s.model.Forward
			if len(s.slots) > 0 {
				var err error
				if fwd, err = s.model.NewForward(); err != nil {
					return nil, fmt.Errorf("a KV-cache slot for tenant %s: %w", tenant, err)
				}
			}
			sess, err := engine.NewSession(fwd, s.model.Tokenizer)
			if err != nil {
				return nil, err
			}
			sl = &slot{sess: sess}
			s.slots = append(s.slots, sl)
		} else {
			sl = s.slots[0]
			for _, x := range s.slots[1:] {
				if x.used < sl.used {
					sl = x
				}
			}
		}
		sl.tenant = tenant
		sl.sess.Forget()
	}
	if !reuse {
		sl.sess.Forget()
	}
	sl.used = s.turns
	return sl.sess, nil
}

// runTurn waits for the model (round-robin across tenants), then generates.
// The request's context cancels the wait and the turn.
func (s *Server) runTurn(ctx context.Context, req turnRequest) (turnResult, error) {
	queued := time.Now()
	release, err := s.sched.Acquire(ctx, req.tenant.Name)
	if err != nil {
		return turnResult{}, err
	}
	granted := time.Now()
	res := turnResult{queue: granted.Sub(queued)}
	defer release()
	s.metrics.queueWait.WithLabelValues(req.tenant.Name).Observe(res.queue.Seconds())
	s.wg.Add(1)
	defer s.wg.Done()
	s.metrics.active.Inc()
	defer s.metrics.active.Dec()

	sess, err := s.session(req.tenant.Name, req.cachePrompt)
	if err != nil {
		return res, err
	}
	ctxLen := s.model.Forward.ContextLength()
	if len(req.prompt) >= ctxLen {
		return res, badRequest("prompt", "the prompt is %d tokens; the context holds %d: %v", len(req.prompt), ctxLen,
			engine.ErrContextExceeded)
	}
	maxTokens := req.maxTokens
	if maxTokens == 0 {
		maxTokens = ctxLen - len(req.prompt)
	}
	afterCancel := 0 // tokens completed after ctx ended
	cfg := engine.GenerateConfig{
		MaxTokens: maxTokens, Seed: req.seed, Logprobs: req.logprobs, TopLogprobs: req.topLogprobs,
		Cancel: engine.FromContext(ctx), Sampler: req.pol.sampler, Stop: req.pol.stop, OnLogprobs: req.onLogprobs,
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
	turn, err := sess.Generate(req.prompt, cfg)
	s.sched.observeTurn(time.Since(start))
	res.turn, res.held = turn, time.Since(granted)
	s.observe(req.tenant, turn, err, afterCancel)
	if err != nil {
		var pe *engine.PolicyError
		if errors.As(err, &pe) {
			return res, err
		}
		return res, fmt.Errorf("generate: %w", err)
	}
	if turn.Stop == engine.StopCancelled {
		return res, turn.Cause
	}
	if turn.Stop == engine.StopCallback {
		return res, turn.Cause
	}
	return res, nil
}

// observe records a turn's metrics.
func (s *Server) observe(t *Tenant, turn engine.Turn, err error, afterCancel int) {
	m := s.metrics
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
