package serving

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/realizar-host/realizar-host/engine"
	"github.com/realizar-host/realizar-host/forward"
)

// Shares is one tenant's share of the core. A value < 1 means all of it.
type Shares struct {
	// Places is the most places of the batch the tenant holds at once.
	Places int
	// Queued is the most requests the tenant has admitted and not yet
	// running (preparing, or waiting for a place).
	Queued int
	// KVBytes is the most KV cache bytes the tenant's running turns
	// reserve together; it matters only under a KV budget.
	KVBytes int64
}

// scheduler hands out the places of the batch and the KV budget, and
// keeps the idle KV slots.
//
// Places: at most places turns hold one at once, a tenant at most its
// Shares.Places. Waiting turns form queues that are round-robin across
// tenants and FIFO within one: when a place frees, the first tenant in the
// ring that is under its cap and whose oldest turn fits the KV budget gets
// it, and moves to the back of the ring.
//
// Queue: admission reserves an entry before any work. A tenant holds at
// most its Shares.Queued entries; past the queue's capacity, only a tenant
// holding less than an equal share of it (capacity over the tenants with
// entries) is admitted, so one tenant never fills the queue for others,
// and only while the entries stay under twice the capacity (equal shares
// alone do not bound them: each tenant's share is taken against the
// tenants there when it came, capacity/2 + capacity/3 + ... in all).
//
// KV: a running turn reserves its slot's positions × kvPerPos bytes, and
// its draft model's cache's bytes (KVDrafter) while it runs, charged to
// its tenant's Shares.KVBytes; idle slots are evicted, least
// recently used first, to make room; a turn that does not fit waits in its
// tenant's queue, and one that can never fit is refused at Start.
//
// Safe for concurrent use.
type scheduler struct {
	mu       sync.Mutex
	places   int
	capacity int
	shares   func(tenant string) Shares

	busy     int
	held     map[string]int // places held per tenant
	reserved map[string]int // admitted and not yet granted, per tenant
	entries  int            // sum of reserved
	waiting  int            // turns in queues
	ring     []string       // tenants with waiting turns, in service order
	queues   map[string][]*waiter

	kvBudget int64 // bytes; 0: none
	kvPerPos int64
	kvUsed   int64            // bytes of every slot: running, idle and being made
	kvHeld   map[string]int64 // bytes charged to each tenant's running turns
	idle     []*slot          // least recently used first
	maxIdle  int
	lone     bool  // one forward only: its slot passes from tenant to tenant
	first    *slot // the lone forward's slot, once made
	uses     uint64

	// turn estimates one turn's time (an exponential average), for
	// Retry-After; promised counts the retries promised to each tenant
	// per Unix second.
	turn     time.Duration
	observed bool
	promised map[string]map[int64]int
}

// slot is a Session over a forward of its own, holding one tenant's tokens.
type slot struct {
	tenant    string
	sess      *engine.Session
	fwd       forward.ArchForward
	seqFwd    *forward.SequenceForward // fwd, when it can join a batched pass; nil: alone
	positions int                      // KV positions reserved (a cache never shrinks)
	used      uint64
}

// waiter is a started turn waiting for a place.
type waiter struct {
	tenant    string
	positions int
	draft     int64 // bytes of the turn's draft model's KV cache (KVDrafter)
	ready     chan struct{}
	granted   bool
	grant     grant
}

// grant is a place and a KV reservation: sl is the slot to use (nil: make
// one of positions positions), charge the bytes charged to the tenant
// (draft of them the turn's draft model's cache, freed with the grant).
type grant struct {
	tenant    string
	sl        *slot
	positions int
	charge    int64
	draft     int64
}

func newScheduler(places, capacity, maxIdle int, kvBudget, kvPerPos int64, lone bool, shares func(string) Shares) *scheduler {
	if shares == nil {
		shares = func(string) Shares { return Shares{} }
	}
	return &scheduler{places: max(places, 1), capacity: max(capacity, 1), shares: shares, maxIdle: maxIdle,
		kvBudget: kvBudget, kvPerPos: kvPerPos, lone: lone, held: map[string]int{}, reserved: map[string]int{},
		queues: map[string][]*waiter{}, kvHeld: map[string]int64{}, turn: time.Second, promised: map[string]map[int64]int{}}
}

// sharesOf is tenant's shares with the unset ones filled in.
func (s *scheduler) sharesOf(tenant string) Shares {
	sh := s.shares(tenant)
	if sh.Places < 1 || sh.Places > s.places {
		sh.Places = s.places
	}
	if sh.Queued < 1 {
		sh.Queued = s.capacity
	}
	if sh.KVBytes < 1 || (s.kvBudget > 0 && sh.KVBytes > s.kvBudget) {
		sh.KVBytes = s.kvBudget
	}
	return sh
}

// admit reserves a queue entry for tenant, or refuses.
func (s *scheduler) admit(tenant string, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	sh := s.sharesOf(tenant)
	n := s.reserved[tenant]
	if n >= sh.Queued {
		return &Refused{Reason: reasonTenantQueue, Tenant: tenant, Queued: n, Share: sh.Queued,
			RetryAfter: s.retryLocked(tenant, sh, now)}
	}
	if s.entries >= s.capacity {
		tenants := len(s.reserved)
		if n == 0 {
			tenants++
		}
		if n >= s.capacity/tenants || s.entries+1 >= 2*s.capacity {
			return &Refused{Reason: ReasonQueue, Tenant: tenant, Queued: n, Share: s.capacity,
				RetryAfter: s.retryLocked(tenant, sh, now)}
		}
	}
	s.reserved[tenant]++
	s.entries++
	return nil
}

// unreserve gives back one of tenant's entries (a turn that never started).
func (s *scheduler) unreserve(tenant string) {
	s.mu.Lock()
	s.unreserveLocked(tenant)
	s.mu.Unlock()
}

func (s *scheduler) unreserveLocked(tenant string) {
	s.entries--
	if s.reserved[tenant]--; s.reserved[tenant] <= 0 {
		delete(s.reserved, tenant)
	}
}

// retryLocked estimates when tenant's retry will be admitted: after the
// entries ahead of it drain at the tenant's pace (its places per turn),
// in the first whole second from then that holds fewer promised retries
// than the tenant can take in one (its queue share and its pace), so that
// the refused requests of a burst come back spread out instead of
// together.
func (s *scheduler) retryLocked(tenant string, sh Shares, now time.Time) time.Duration {
	ahead := s.reserved[tenant]
	wait := s.turn * time.Duration((ahead+sh.Places)/sh.Places)
	perSecond := sh.Queued
	if s.turn > 0 {
		perSecond = min(perSecond, int(int64(sh.Places)*int64(time.Second)/int64(s.turn)))
	}
	perSecond = max(perSecond, 1)
	p := s.promised[tenant]
	if p == nil {
		p = map[int64]int{}
		s.promised[tenant] = p
	}
	nowSec := now.Unix()
	for sec := range p {
		if sec <= nowSec {
			delete(p, sec)
		}
	}
	sec := max(now.Add(wait).Add(time.Second-1).Unix(), nowSec+1)
	for p[sec] >= perSecond {
		sec++
	}
	p[sec]++
	return time.Unix(sec, 0).Sub(now)
}

// wait queues w and waits for its grant. ctx ending first returns ctx's
// cause and gives the entry back; the turn behind w in its tenant's queue
// may then fit where w did not.
func (s *scheduler) wait(ctx context.Context, w *waiter) (grant, []*slot, error) {
	s.mu.Lock()
	if len(s.queues[w.tenant]) == 0 {
		s.ring = append(s.ring, w.tenant)
	}
	s.queues[w.tenant] = append(s.queues[w.tenant], w)
	s.waiting++
	closing := s.grantLocked(nil)
	s.mu.Unlock()

	select {
	case <-w.ready:
		return w.grant, closing, nil
	case <-ctx.Done():
	}
	s.mu.Lock()
	if w.granted {
		// Granted while giving up: pass the place on.
		s.mu.Unlock()
		return grant{}, append(closing, s.release(w.grant, nil, false)...), context.Cause(ctx)
	}
	s.removeLocked(w)
	s.unreserveLocked(w.tenant)
	closing = s.grantLocked(closing)
	s.mu.Unlock()
	return grant{}, closing, context.Cause(ctx)
}

// removeLocked takes a waiter that was never granted out of its queue.
func (s *scheduler) removeLocked(w *waiter) {
	q := s.queues[w.tenant]
	if i := slices.Index(q, w); i >= 0 {
		q = slices.Delete(q, i, i+1)
	}
	s.waiting--
	if len(q) > 0 {
		s.queues[w.tenant] = q
		return
	}
	delete(s.queues, w.tenant)
	if i := slices.Index(s.ring, w.tenant); i >= 0 {
		s.ring = slices.Delete(s.ring, i, i+1)
	}
}

// grantLocked gives free places to waiters: the first tenant in the ring
// under its cap whose oldest turn fits the KV budget gets one and moves to
// the back. It returns the idle slots it evicted, to close outside the lock.
func (s *scheduler) grantLocked(closing []*slot) []*slot {
	for s.busy < s.places {
		granted := false
		for i, tenant := range s.ring {
			sh := s.sharesOf(tenant)
			if s.held[tenant] >= sh.Places {
				continue
			}
			w := s.queues[tenant][0]
			g, ok, evicted := s.fitLocked(w, sh)
			closing = append(closing, evicted...)
			if !ok {
				continue
			}
			s.ring = slices.Delete(s.ring, i, i+1)
			if q := s.queues[tenant][1:]; len(q) > 0 {
				s.queues[tenant] = q
				s.ring = append(s.ring, tenant)
			} else {
				delete(s.queues, tenant)
			}
			s.waiting--
			s.unreserveLocked(tenant)
			s.busy++
			s.held[tenant]++
			s.kvHeld[tenant] += g.charge
			w.grant, w.granted = g, true
			close(w.ready)
			granted = true
			break
		}
		if !granted {
			return closing
		}
	}
	return closing
}

// fitLocked finds w a slot within its tenant's KV share and the budget:
// the tenant's most recently used idle slot, or a new one, evicting other
// idle slots (least recently used first) only when that makes it fit.
func (s *scheduler) fitLocked(w *waiter, sh Shares) (g grant, ok bool, evicted []*slot) {
	var sl *slot
	for i := len(s.idle) - 1; i >= 0; i-- {
		if s.idle[i].tenant == w.tenant {
			sl = s.idle[i]
			break
		}
	}
	if sl == nil && s.lone {
		sl = s.first // nil until the first turn makes it
	}
	have := 0
	if sl != nil {
		have = sl.positions
	}
	positions := max(w.positions, have)
	charge := int64(positions) * s.kvPerPos
	if s.kvBudget > 0 && s.kvHeld[w.tenant]+charge+w.draft > sh.KVBytes && sl != nil && !s.lone {
		// The tenant's idle slot grew past what this turn needs: a new
		// one may fit where it does not.
		sl, have, positions = nil, 0, w.positions
		charge = int64(positions) * s.kvPerPos
	}
	charge += w.draft
	need := int64(positions-have)*s.kvPerPos + w.draft
	if s.kvBudget > 0 {
		if s.kvHeld[w.tenant]+charge > sh.KVBytes {
			return grant{}, false, nil
		}
		var evictable int64
		for _, x := range s.idle {
			if x != sl && x != s.first {
				evictable += int64(x.positions) * s.kvPerPos
			}
		}
		if s.kvUsed+need-evictable > s.kvBudget {
			return grant{}, false, nil
		}
		for i := 0; s.kvUsed+need > s.kvBudget && i < len(s.idle); {
			if x := s.idle[i]; x != sl && x != s.first {
				evicted = append(evicted, s.evictLocked(i))
				continue
			}
			i++
		}
	}
	if sl != nil {
		if i := slices.Index(s.idle, sl); i >= 0 {
			s.idle = slices.Delete(s.idle, i, i+1)
		}
		if sl.tenant != w.tenant {
			sl.sess.Forget() // the lone forward: no tenant's tokens shape another's turn
		}
		sl.positions = positions
	}
	s.kvUsed += need
	return grant{tenant: w.tenant, sl: sl, positions: positions, charge: charge, draft: w.draft}, true, evicted
}

// evictLocked drops idle slot i and returns it to close (nil for the lone
// forward's slot, which stays and forgets its tokens).
func (s *scheduler) evictLocked(i int) *slot {
	sl := s.idle[i]
	s.idle = slices.Delete(s.idle, i, i+1)
	if sl == s.first {
		sl.sess.Forget()
		return nil
	}
	s.kvUsed -= int64(sl.positions) * s.kvPerPos
	return sl
}

// release ends a grant: sl (nil when no slot was made) goes idle, or is
// closed when broken; the place and the tenant's KV charge free, and free
// places go to waiters. It returns the slots to close.
func (s *scheduler) release(g grant, sl *slot, broken bool) []*slot {
	s.mu.Lock()
	defer s.mu.Unlock()
	var closing []*slot
	s.busy--
	if s.held[g.tenant]--; s.held[g.tenant] <= 0 {
		delete(s.held, g.tenant)
	}
	if s.kvHeld[g.tenant] -= g.charge; s.kvHeld[g.tenant] <= 0 {
		delete(s.kvHeld, g.tenant)
	}
	s.kvUsed -= g.draft
	switch {
	case sl == nil:
		if g.sl == nil {
			s.kvUsed -= int64(g.positions) * s.kvPerPos // never made
		} else {
			s.idle = append(s.idle, g.sl)
		}
	case broken && sl != s.first:
		s.kvUsed -= int64(sl.positions) * s.kvPerPos
		closing = append(closing, sl)
	default:
		s.uses++
		sl.tenant, sl.used = g.tenant, s.uses
		s.idle = append(s.idle, sl)
	}
	for len(s.idle) > s.maxIdle {
		if x := s.evictLocked(0); x != nil {
			closing = append(closing, x)
		}
	}
	return s.grantLocked(closing)
}

// observeTurn updates the turn estimate used for Retry-After.
func (s *scheduler) observeTurn(d time.Duration) {
	s.mu.Lock()
	if !s.observed {
		s.turn, s.observed = d, true
	} else {
		s.turn = (s.turn*7 + d) / 8
	}
	s.mu.Unlock()
}

// queued is the number of turns waiting for a place.
func (s *scheduler) queued() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.waiting
}

// Held is the number of places tenant holds now.
func (s *scheduler) Held(tenant string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.held[tenant]
}

// closeSlots closes evicted slots' sessions and forwards (a GPU
// sequence's KV cache lives in device memory).
func closeSlots(slots []*slot) {
	for _, sl := range slots {
		if sl == nil {
			continue
		}
		_ = sl.sess.Close()
		if c, ok := sl.fwd.(interface{ Close() error }); ok {
			_ = c.Close()
		}
	}
}
