package server

import (
	"context"
	"net/http"
	"sync"
	"time"
)

// Scheduler hands out the model, one request at a time. Waiting requests
// form a bounded queue that is round-robin across tenants and FIFO within a
// tenant: when the model is released, the tenant at the head of the ring
// gets it for its oldest request and moves to the back of the ring. A
// tenant with 16 queued requests therefore delays another tenant's single
// request by at most one turn.
//
// Safe for concurrent use.
type Scheduler struct {
	mu       sync.Mutex
	capacity int
	queued   int
	busy     bool
	ring     []string // tenants with waiters, in service order
	queues   map[string][]*waiter
	// turn estimates one request's time, for Retry-After.
	turn time.Duration
}

type waiter struct {
	ready   chan struct{}
	granted bool
}

// NewScheduler returns a Scheduler whose queue holds at most capacity
// waiting requests (the running one not counted). capacity < 1 means 1.
func NewScheduler(capacity int) *Scheduler {
	return &Scheduler{capacity: max(capacity, 1), queues: map[string][]*waiter{}, turn: time.Second}
}

// Acquire waits for the model on behalf of tenant and returns the function
// that releases it (call it exactly once). A full queue is a 429 with
// Retry-After; ctx ending while queued returns ctx's error and leaves the
// queue.
func (s *Scheduler) Acquire(ctx context.Context, tenant string) (release func(), err error) {
	s.mu.Lock()
	if !s.busy && s.queued == 0 {
		s.busy = true
		s.mu.Unlock()
		return s.release, nil
	}
	if s.queued >= s.capacity {
		retry := s.turn * time.Duration(s.queued+1)
		s.mu.Unlock()
		return nil, &APIError{Status: http.StatusTooManyRequests, Type: typeRateLimit, Code: "queue_full",
			RetryAfter: retry, Message: "the server's queue is full; retry later"}
	}
	w := &waiter{ready: make(chan struct{})}
	if len(s.queues[tenant]) == 0 {
		s.ring = append(s.ring, tenant)
	}
	s.queues[tenant] = append(s.queues[tenant], w)
	s.queued++
	s.mu.Unlock()

	select {
	case <-w.ready:
		return s.release, nil
	case <-ctx.Done():
	}
	s.mu.Lock()
	if w.granted {
		// Granted while we were giving up: pass the model on.
		s.mu.Unlock()
		s.release()
		return nil, ctx.Err()
	}
	s.remove(tenant, w)
	s.mu.Unlock()
	return nil, ctx.Err()
}

// remove takes a waiter that was never granted out of the queue.
func (s *Scheduler) remove(tenant string, w *waiter) {
	q := s.queues[tenant]
	for i, x := range q {
		if x == w {
			q = append(q[:i], q[i+1:]...)
			break
		}
	}
	s.queued--
	if len(q) > 0 {
		s.queues[tenant] = q
		return
	}
	delete(s.queues, tenant)
	for i, t := range s.ring {
		if t == tenant {
			s.ring = append(s.ring[:i], s.ring[i+1:]...)
			break
		}
	}
}

// release gives the model to the next waiter, or marks it idle.
func (s *Scheduler) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.ring) == 0 {
		s.busy = false
		return
	}
	tenant := s.ring[0]
	s.ring = s.ring[1:]
	q := s.queues[tenant]
	w := q[0]
	q = q[1:]
	if len(q) > 0 {
		s.queues[tenant] = q
		s.ring = append(s.ring, tenant)
	} else {
		delete(s.queues, tenant)
	}
	s.queued--
	w.granted = true
	close(w.ready)
}

// Queued is the number of waiting requests.
func (s *Scheduler) Queued() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.queued
}

// observeTurn updates the turn estimate used for Retry-After (an
// exponential average of request times).
func (s *Scheduler) observeTurn(d time.Duration) {
	s.mu.Lock()
	s.turn = (s.turn*7 + d) / 8
	s.mu.Unlock()
}
