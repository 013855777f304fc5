package server

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/realizar-host/realizar-host/engine"
	"github.com/realizar-host/realizar-host/internal/serving"
	"github.com/realizar-host/realizar-host/internal/tenancy"
)

// generate runs a generation request through the pipeline: admit (the
// tenant's max_concurrent and rate, then its share of the queue) before
// any costly work, decoding the body included, then read the body;
// prepare (decode and validate it, templates, tokenizing, compiles,
// plugins) in the tenant's share of the preparation pool; run (the
// serving core: a place within the tenant's shares, then the batched
// passes, on a goroutine of the core's) and respond (one responder per
// response shape, draining the turn's buffered output at the client's
// pace). decode is the endpoint's decoding and validation of the body;
// shape is the API whose response the responder writes.
func (s *Server) generate(w http.ResponseWriter, r *http.Request, t *tenancy.Tenant, shape apiShape, decode func(body []byte) (prepared, error)) error {
	return s.generateLoading(w, r, t, shape, nil, decode)
}

// admitBody admits a request that takes a place on the serving core — the
// tenant's max_concurrent and rate, then its share of the queue — before
// reading its body (at most maxBodyBytes); the ticket starts its turn, and
// release gives both places back. The errors are the tenant's admission
// errors, the core's (turnError) and readBody's.
func (s *Server) admitBody(w http.ResponseWriter, r *http.Request, t *tenancy.Tenant) (body []byte, ticket *serving.Ticket, release func(), err error) {
	done, err := t.Admit(time.Now())
	if err != nil {
		return nil, nil, nil, err
	}
	ticket, err = s.core.Admit(t.Name)
	if err != nil {
		done()
		return nil, nil, nil, turnError(err)
	}
	release = func() { ticket.Release(); done() }
	body, err = readBody(w, r)
	if err != nil {
		release()
		return nil, nil, nil, err
	}
	return body, ticket, release, nil
}

// generateLoading is generate with load, when not nil, run on the body
// after admission and before the preparation: the I/O a request needs (a
// stored conversation), outside the preparation pool, so that a slow
// store holds only the request's own places.
func (s *Server) generateLoading(w http.ResponseWriter, r *http.Request, t *tenancy.Tenant, shape apiShape,
	load func(ctx context.Context, body []byte) error, decode func(body []byte) (prepared, error)) error {
	ctx := r.Context()
	body, ticket, release, err := s.admitBody(w, r, t)
	if err != nil {
		return err
	}
	defer release()
	if load != nil {
		if err := load(ctx, body); err != nil {
			return err
		}
	}
	p, pol, err := s.prepare(ctx, t, body, decode)
	if err != nil {
		return err
	}
	defer pol.Close()
	rs := s.newResponder(w, ctx, &p, pol, shape)
	turn, err := ticket.Start(ctx, rs.request())
	if err != nil {
		return turnError(err)
	}
	// The policies are closed (deferred above) only once the turn has
	// ended, whatever the responder did.
	defer turn.Result() //nolint:errcheck // waits for the end; the responder read the result
	switch {
	case shape == shapeMessages && p.fields.Stream:
		return rs.messagesStream(turn)
	case shape == shapeMessages:
		return rs.messagesWhole(turn)
	case shape == shapeResponses && p.fields.Stream:
		return rs.responsesStream(turn)
	case shape == shapeResponses:
		return rs.responsesWhole(turn)
	case p.fields.Stream:
		return rs.stream(turn)
	}
	return rs.whole(turn)
}

// apiShape is the API a generation request came in by, which decides
// its response's shape (and its errors').
type apiShape uint8

const (
	shapeCompletion apiShape = iota // OpenAI's /v1/completions
	shapeChat                       // OpenAI's /v1/chat/completions
	shapeMessages                   // Anthropic's /v1/messages
	shapeResponses                  // OpenAI's /v1/responses
)

// errShuttingDown cancels the turns still running when the shutdown's
// grace period ends (Server.CancelTurns).
var errShuttingDown = errors.New("server: shutting down")

// errClientStalled cancels a turn whose client accepted nothing for the
// write timeout, or whose connection failed.
var errClientStalled = errors.New("server: the client stopped reading")

// turnError maps the serving core's errors to API errors: a refused
// admission is a 429 with the core's Retry-After, a turn that can never
// fit is a 400, the end of a shutdown's grace is a 503.
func turnError(err error) error {
	var refused *serving.Refused
	var tooLarge *serving.TooLarge
	var tooLong *serving.PromptTooLong
	switch {
	case errors.As(err, &refused):
		msg := fmt.Sprintf("your share of the server's queue (%d requests) is full; retry later", refused.Share)
		if refused.Reason == serving.ReasonQueue {
			msg = "the server's queue is full; retry later"
		}
		return &APIError{Status: http.StatusTooManyRequests, Type: typeRateLimit, Code: refused.Reason,
			RetryAfter: refused.RetryAfter, Message: msg}
	case errors.As(err, &tooLarge) && tooLarge.Draft > 0:
		return badRequest("max_tokens", "the request needs %d KV positions (%d MiB, %d MiB of them the draft model's); your share of the server's KV budget is %d MiB",
			tooLarge.Positions, tooLarge.Need>>20, tooLarge.Draft>>20, tooLarge.Share>>20)
	case errors.As(err, &tooLarge):
		return badRequest("max_tokens", "the request needs %d KV positions (%d MiB); your share of the server's KV budget is %d MiB",
			tooLarge.Positions, tooLarge.Need>>20, tooLarge.Share>>20)
	case errors.As(err, &tooLong):
		return &APIError{Status: http.StatusBadRequest, Type: typeInvalidRequest, Param: "prompt", Code: "context_length_exceeded",
			Message: tooLong.Error()}
	case errors.Is(err, errShuttingDown), errors.Is(err, serving.ErrClosed):
		return &APIError{Status: http.StatusServiceUnavailable, Type: typeServer, Code: "shutting_down",
			RetryAfter: time.Second, Message: "the server is shutting down; the request was cancelled"}
	}
	return err
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
func realizarOf(res serving.Result, pol *policies) *realizarResponse {
	t := res.Turn.Timings
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	return &realizarResponse{Seed: int64(res.Turn.Seed), StopReason: res.Turn.Stop.String(), Policies: pol.names,
		QueueMs: ms(res.Queue), PrefillMs: ms(t.Prefill), DecodeMs: ms(t.Decode), PoliciesMs: ms(t.Policies),
		ReusedTokens: res.Turn.Reused, Drafts: draftsOf(res.Turn), Warnings: pol.warnings}
}

// drawSeed is a request's seed: its own, taken as its two's-complement
// bits when negative, or one drawn in [0, 2^63), so that the response
// can report it as the int64 OpenAI clients read.
func drawSeed(f *samplingFields) uint64 {
	if f.Seed != nil {
		return uint64(*f.Seed)
	}
	return rand.Uint64() >> 1
}
