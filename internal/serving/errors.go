package serving

import (
	"errors"
	"fmt"
	"time"

	"github.com/realizar-host/realizar-host/forward"
)

// Refusal reasons, as Refused.Reason.
const (
	// ReasonTenantQueue: the tenant's own share of the queue is full.
	reasonTenantQueue = "tenant_queue_full"
	// ReasonQueue: the server's queue is full and the tenant already holds
	// an equal share of it, or its overflow is spent (the entries stay
	// under twice the queue's size).
	ReasonQueue = "queue_full"
)

// Refused is an admission refused for now. RetryAfter is when a retry is
// expected to be admitted: the time for what is ahead of the tenant (its
// own queued requests and the retries already promised to it) to drain at
// the tenant's pace, in whole seconds.
type Refused struct {
	Reason     string // ReasonTenantQueue or ReasonQueue
	Tenant     string
	Queued     int // the tenant's requests admitted and not yet running
	Share      int // the tenant's share of the queue (ReasonTenantQueue) or the queue's size (ReasonQueue)
	RetryAfter time.Duration
}

func (e *Refused) Error() string {
	if e.Reason == reasonTenantQueue {
		return fmt.Sprintf("serving: tenant %s has %d requests queued, its share of the queue is %d", e.Tenant, e.Queued, e.Share)
	}
	return fmt.Sprintf("serving: the queue of %d requests is full", e.Share)
}

// TooLarge is a turn whose KV cache can never fit: more bytes than its
// tenant's share of the KV budget (or the whole budget).
type TooLarge struct {
	Positions int   // KV positions the turn needs: its prompt and its budget, within the context
	Need      int64 // bytes: Positions × the KV bytes per position, and Draft
	Draft     int64 // bytes of Need its draft model's KV cache holds (KVDrafter)
	Share     int64 // bytes the tenant may hold
}

func (e *TooLarge) Error() string {
	if e.Draft > 0 {
		return fmt.Sprintf("serving: the request needs %d KV positions (%d MiB, %d MiB of them the draft model's); its tenant's share of the KV budget is %d MiB",
			e.Positions, e.Need>>20, e.Draft>>20, e.Share>>20)
	}
	return fmt.Sprintf("serving: the request needs %d KV positions (%d MiB); its tenant's share of the KV budget is %d MiB",
		e.Positions, e.Need>>20, e.Share>>20)
}

// ErrPromptTooLong is a prompt at least as long as the context: no token
// could follow it. Start returns it as a *PromptTooLong.
var ErrPromptTooLong = errors.New("serving: the prompt fills the context")

// PromptTooLong is a prompt of Tokens tokens for a context of Context
// positions. It is ErrPromptTooLong and forward.ErrContextExceeded to
// errors.Is.
type PromptTooLong struct {
	Tokens, Context int
}

func (e *PromptTooLong) Error() string {
	return fmt.Sprintf("the prompt is %d tokens; the context holds %d: %v", e.Tokens, e.Context, forward.ErrContextExceeded)
}

// Is reports ErrPromptTooLong and forward.ErrContextExceeded.
func (e *PromptTooLong) Is(target error) bool {
	return target == ErrPromptTooLong || target == forward.ErrContextExceeded
}

// ErrClosed is a turn started after Close, or cut by it.
var ErrClosed = errors.New("serving: the core is closed")
