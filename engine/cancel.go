package engine

import (
	"context"
	"fmt"
	"sync/atomic"
)

// CancelToken tells a running turn to stop. The Session polls it once per
// decode step, before anything else in the step, so a turn stops within one
// token of Cancel.
//
// A token is cancelled by Cancel, by its context (FromContext) or by running
// out of its poll budget (NewCancelTokenAfter), which gives tests a
// deterministic cancel point. Once cancelled it stays cancelled.
//
// A nil *CancelToken is valid and never cancels. Methods are safe for
// concurrent use: Cancel is typically called from another goroutine.
type CancelToken struct {
	polls     atomic.Int64
	cancelled atomic.Bool
	budget    int64 // polls that report "go on"; < 0 means no budget
	ctx       context.Context
}

// NewCancelToken returns a token that cancels only when Cancel is called.
func NewCancelToken() *CancelToken { return &CancelToken{budget: -1} }

// NewCancelTokenAfter returns a token whose first polls polls report "go
// on" and whose next poll reports cancelled: with polls = 8, the 9th Poll is
// the first to return true. polls < 0 means no budget. Cancel still works.
func NewCancelTokenAfter(polls int) *CancelToken { return &CancelToken{budget: int64(polls)} }

// FromContext returns a token that is cancelled once ctx is done (and by
// Cancel). It starts no goroutine: each Poll reads ctx.Err(), so nothing
// outlives the turn whether or not ctx is ever cancelled.
func FromContext(ctx context.Context) *CancelToken {
	return &CancelToken{budget: -1, ctx: ctx}
}

// Cancel cancels the token. It may be called any number of times, from any
// goroutine.
func (c *CancelToken) Cancel() {
	if c != nil {
		c.cancelled.Store(true)
	}
}

// Poll counts one poll and reports whether the token is cancelled. The
// Session calls it exactly once per decode step.
func (c *CancelToken) Poll() bool {
	if c == nil {
		return false
	}
	n := c.polls.Add(1)
	if c.budget >= 0 && n > c.budget {
		c.cancelled.Store(true)
	}
	return c.Cancelled()
}

// Cancelled reports whether the token is cancelled, without counting a poll.
func (c *CancelToken) Cancelled() bool {
	if c == nil {
		return false
	}
	if c.cancelled.Load() {
		return true
	}
	if c.ctx != nil && c.ctx.Err() != nil {
		c.cancelled.Store(true)
		return true
	}
	return false
}

// Polls is the number of Poll calls so far.
func (c *CancelToken) Polls() int {
	if c == nil {
		return 0
	}
	return int(c.polls.Load())
}

// Err is nil while the token is not cancelled, and afterwards an error that
// wraps ErrCancelled (and, for FromContext, the context's cause, so
// errors.Is(err, context.DeadlineExceeded) works too).
func (c *CancelToken) Err() error {
	if !c.Cancelled() {
		return nil
	}
	if c.ctx != nil {
		if cause := context.Cause(c.ctx); cause != nil {
			return fmt.Errorf("%w: %w", ErrCancelled, cause)
		}
	}
	return ErrCancelled
}
