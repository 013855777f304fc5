package server

import (
	"context"
	"net/http"
	"sync"
	"time"
)

// scheduler hands out the places of the batch: at most places requests
// hold one at once (they decode together, one sequence each), and a tenant
// holds at most its cap of them. Waiting requests form a bounded queue that
// is round-robin across tenants and FIFO within a tenant: when a place
// frees, the first tenant in the ring that is under its cap gets it for its
// oldest request and moves to the back of the ring. A tenant with 16 queued
// requests therefore never holds more than its cap, and another tenant's
// request takes the next free place.
//
// Safe for concurrent use.
type scheduler struct {
	mu       sync.Mutex
	capacity int
	places   int
	capOf    func(tenant string) int
	queued   int
	busy     int            // places held
	held     map[string]int // places held per tenant
	ring     []string       // tenants with waiters, in service order
	queues   map[string][]*waiter
	// turn estimates one request's time, for Retry-After.
	turn time.Duration
}

type waiter struct {
	ready   chan struct{}
	granted bool
}

// newScheduler returns a scheduler with one place whose queue holds at most
// capacity waiting requests (the running one not counted). capacity < 1
// means 1.
func newScheduler(capacity int) *scheduler { return newBatchScheduler(capacity, 1, nil) }

// newBatchScheduler returns a scheduler with places places (< 1 means 1),
// a queue of at most capacity waiters (< 1 means 1) and capOf(tenant) as
// each tenant's most places at once (nil, or a value < 1, means places).
func newBatchScheduler(capacity, places int, capOf func(tenant string) int) *scheduler {
	return &scheduler{capacity: max(capacity, 1), places: max(places, 1), capOf: capOf,
		held: map[string]int{}, queues: map[string][]*waiter{}, turn: time.Second}
}

// tenantCap is the most places tenant may hold.
func (s *scheduler) tenantCap(tenant string) int {
	if s.capOf == nil {
		return s.places
	}
	if c := s.capOf(tenant); c >= 1 {
		return min(c, s.places)
	}
	return s.places
}

// Acquire waits for a place on behalf of tenant and returns the function
// that releases it (call it exactly once). A full queue is a 429 with
// Retry-After; ctx ending while queued returns ctx's error and leaves the
// queue.
func (s *scheduler) Acquire(ctx context.Context, tenant string) (release func(), err error) {
	s.mu.Lock()
	if s.busy < s.places && len(s.queues[tenant]) == 0 && s.held[tenant] < s.tenantCap(tenant) && s.queued == 0 {
		s.take(tenant)
		s.mu.Unlock()
		return s.releaser(tenant), nil
	}
	if s.queued >= s.capacity {
		retry := s.turn * time.Duration(s.queued/s.places+1)
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
	s.grant()
	s.mu.Unlock()

	select {
	case <-w.ready:
		return s.releaser(tenant), nil
	case <-ctx.Done():
	}
	s.mu.Lock()
	if w.granted {
		// Granted while we were giving up: pass the place on.
		s.mu.Unlock()
		s.releaser(tenant)()
		return nil, ctx.Err()
	}
	s.remove(tenant, w)
	s.mu.Unlock()
	return nil, ctx.Err()
}

// take counts a place held by tenant.
func (s *scheduler) take(tenant string) {
	s.busy++
	s.held[tenant]++
}

// releaser returns the once-only release of one of tenant's places.
func (s *scheduler) releaser(tenant string) func() {
	var once sync.Once
	return func() { once.Do(func() { s.release(tenant) }) }
}

// remove takes a waiter that was never granted out of the queue.
func (s *scheduler) remove(tenant string, w *waiter) {
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

// release frees one of tenant's places and hands free places on.
func (s *scheduler) release(tenant string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.busy--
	if s.held[tenant]--; s.held[tenant] <= 0 {
		delete(s.held, tenant)
	}
	s.grant()
}

// grant gives free places to waiters: the first tenant in the ring under
// its cap gets one for its oldest request and moves to the back.
func (s *scheduler) grant() {
	for s.busy < s.places {
		i := 0
		for i < len(s.ring) && s.held[s.ring[i]] >= s.tenantCap(s.ring[i]) {
			i++
		}
		if i == len(s.ring) {
			return
		}
		tenant := s.ring[i]
		s.ring = append(s.ring[:i], s.ring[i+1:]...)
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
		s.take(tenant)
		w.granted = true
		close(w.ready)
	}
}

// Queued is the number of waiting requests.
func (s *scheduler) Queued() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.queued
}

// Held is the number of places tenant holds now.
func (s *scheduler) Held(tenant string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.held[tenant]
}

// retryAfter estimates when a place frees: one turn.
func (s *scheduler) retryAfter() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.turn
}

// observeTurn updates the turn estimate used for Retry-After (an
// exponential average of request times).
func (s *scheduler) observeTurn(d time.Duration) {
	s.mu.Lock()
	s.turn = (s.turn*7 + d) / 8
	s.mu.Unlock()
}
