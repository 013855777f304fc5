package serving

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// These tests drive the scheduler directly: a waiter's turn is granted
// under the scheduler's lock (inside wait or release), so whether one is
// granted can be read right after the call that grants it. Slots are
// fakes (no Session): nothing here closes them.

// eventually is how long a test waits for a goroutine to reach a state.
const eventually = 5 * time.Second

// pending is a waiter whose wait runs on a goroutine of its own.
type pending struct {
	name    string
	w       *waiter
	done    chan struct{}
	g       grant
	closing []*slot
	err     error
}

// enqueue admits tenant and starts its turn's wait for positions KV
// positions; it returns once the waiter is in its tenant's queue or
// granted, so that waiters enqueued one after another queue in that order.
func enqueue(t *testing.T, s *scheduler, ctx context.Context, name, tenant string, positions int) *pending {
	t.Helper()
	require.NoError(t, s.admit(tenant, time.Now()))
	p := &pending{name: name, w: &waiter{tenant: tenant, positions: positions, ready: make(chan struct{})},
		done: make(chan struct{})}
	go func() {
		defer close(p.done)
		p.g, p.closing, p.err = s.wait(ctx, p.w)
	}()
	require.Eventually(t, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return p.w.granted || slices.Contains(s.queues[tenant], p.w)
	}, eventually, 50*time.Microsecond, "%s never queued", name)
	return p
}

// granted reports whether p holds a place.
func (p *pending) granted(s *scheduler) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return p.w.granted
}

// result waits for p's wait to return.
func (p *pending) result(t *testing.T) (grant, []*slot, error) {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(eventually):
		t.Fatalf("%s: wait did not return", p.name)
	}
	return p.g, p.closing, p.err
}

// finish ends p's granted turn as Core.run does: the slot it was granted,
// or a new (fake) one of the granted positions, goes idle. It returns the
// slots release evicted.
func finish(t *testing.T, s *scheduler, p *pending) []*slot {
	t.Helper()
	g, _, err := p.result(t)
	require.NoError(t, err, p.name)
	sl := g.sl
	if sl == nil {
		sl = &slot{positions: g.positions}
	}
	return s.release(g, sl, false)
}

// hold takes a place for tenant at once and returns it.
func hold(t *testing.T, s *scheduler, tenant string) *pending {
	t.Helper()
	p := enqueue(t, s, context.Background(), tenant, tenant, 0)
	require.True(t, p.granted(s), "%s was not granted at once", tenant)
	return p
}

// entries is the scheduler's count of admitted, ungranted entries.
func entries(s *scheduler) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.entries
}

// TestSchedulerOrder: with one place, waiting turns are granted
// round-robin across tenants (in the order they first queued) and FIFO
// within one; a tenant with one request waits at most one turn behind a
// tenant with many.
func TestSchedulerOrder(t *testing.T) {
	many := []string{"a0"}
	want := []string{"a0", "b0"}
	for i := 1; i < 16; i++ {
		many = append(many, fmt.Sprintf("a%d", i))
		want = append(want, fmt.Sprintf("a%d", i))
	}
	for _, tc := range []struct {
		name     string
		arrivals []string // tenant and its request's index
		want     []string
	}{
		{"round robin", []string{"a0", "a1", "a2", "b0", "b1", "c0"}, []string{"a0", "b0", "c0", "a1", "b1", "a2"}},
		{"interleaved arrivals", []string{"a0", "b0", "a1", "c0", "b1", "a2"}, []string{"a0", "b0", "c0", "a1", "b1", "a2"}},
		{"one behind many", append(many, "b0"), want},
		{"one tenant", []string{"a0", "a1", "a2", "a3"}, []string{"a0", "a1", "a2", "a3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newScheduler(1, 64, 64, 0, 0, false, nil)
			x := hold(t, s, "x")
			var waiting []*pending
			for _, name := range tc.arrivals {
				waiting = append(waiting, enqueue(t, s, context.Background(), name, name[:1], 0))
			}
			require.Equal(t, len(tc.arrivals), s.queued())
			require.Empty(t, finish(t, s, x))

			var order []string
			for len(waiting) > 0 {
				i := slices.IndexFunc(waiting, func(p *pending) bool { return p.granted(s) })
				require.GreaterOrEqual(t, i, 0, "a place is free and nobody was granted it after %v", order)
				p := waiting[i]
				waiting = slices.Delete(waiting, i, i+1)
				for _, q := range waiting {
					require.False(t, q.granted(s), "%s granted while %s holds the only place", q.name, p.name)
				}
				order = append(order, p.name)
				require.Empty(t, finish(t, s, p))
			}
			assert.Equal(t, tc.want, order)
			assert.Equal(t, 0, s.queued())
			assert.Equal(t, 0, entries(s))
		})
	}
}

// TestSchedulerPlaceCaps: a tenant at its Shares.Places queues while
// places are free, other tenants are granted them, and a place the
// capped tenant frees goes to its own waiter.
func TestSchedulerPlaceCaps(t *testing.T) {
	for _, tc := range []struct {
		places, capA int
	}{
		{4, 2},
		{4, 1},
		{3, 2},
		{8, 3},
	} {
		t.Run(fmt.Sprintf("%d places, a capped at %d", tc.places, tc.capA), func(t *testing.T) {
			s := newScheduler(tc.places, 64, tc.places, 0, 0, false, func(tenant string) Shares {
				if tenant == "a" {
					return Shares{Places: tc.capA}
				}
				return Shares{}
			})
			var as []*pending
			for range tc.capA {
				as = append(as, hold(t, s, "a"))
			}
			over := enqueue(t, s, context.Background(), "a-over", "a", 0)
			assert.False(t, over.granted(s), "a holds %d places, its cap", tc.capA)
			assert.Equal(t, 1, s.queued())

			// Every free place goes to b, at once, while a's waiter waits.
			var bs []*pending
			for i := range tc.places - tc.capA {
				p := enqueue(t, s, context.Background(), fmt.Sprintf("b%d", i), "b", 0)
				require.True(t, p.granted(s), "b%d: a place is free", i)
				bs = append(bs, p)
			}
			assert.Equal(t, tc.capA, s.Held("a"))
			assert.Equal(t, tc.places-tc.capA, s.Held("b"))

			// b freeing a place does not lift a's cap.
			require.Empty(t, finish(t, s, bs[0]))
			assert.False(t, over.granted(s))
			// a freeing one does.
			require.Empty(t, finish(t, s, as[0]))
			assert.True(t, over.granted(s))
			assert.Equal(t, tc.capA, s.Held("a"))

			for _, p := range append(append(as[1:], over), bs[1:]...) {
				require.Empty(t, finish(t, s, p))
			}
			assert.Equal(t, 0, s.Held("a"))
			assert.Equal(t, 0, s.Held("b"))
			assert.Equal(t, 0, entries(s))
		})
	}
}

// refusal asserts that err is a *Refused with reason and returns it.
func refusal(t *testing.T, err error, reason string) *Refused {
	t.Helper()
	var r *Refused
	require.ErrorAs(t, err, &r)
	assert.Equal(t, reason, r.Reason)
	return r
}

// TestAdmitShares: a tenant at its Shares.Queued is refused while another
// is admitted; past the queue's capacity, only a tenant holding less than
// an equal share of it is admitted; entries given back (Release, a
// grant) make room again.
func TestAdmitShares(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	t.Run("tenant share", func(t *testing.T) {
		s := newScheduler(1, 8, 8, 0, 0, false, func(tenant string) Shares {
			if tenant == "a" {
				return Shares{Queued: 2}
			}
			return Shares{}
		})
		require.NoError(t, s.admit("a", now))
		require.NoError(t, s.admit("a", now))
		r := refusal(t, s.admit("a", now), reasonTenantQueue)
		assert.Equal(t, "a", r.Tenant)
		assert.Equal(t, 2, r.Queued)
		assert.Equal(t, 2, r.Share)
		assert.Positive(t, r.RetryAfter)
		assert.Contains(t, r.Error(), "tenant a has 2 requests queued")
		require.NoError(t, s.admit("b", now), "b's share is not a's")

		s.unreserve("a")
		require.NoError(t, s.admit("a", now), "a gave an entry back")
	})
	t.Run("queue full", func(t *testing.T) {
		// Shares of the queue past its capacity: only the queue's own
		// bound applies.
		s := newScheduler(1, 4, 0, 0, 0, false, func(string) Shares { return Shares{Queued: 100} })
		for range 4 {
			require.NoError(t, s.admit("a", now))
		}
		r := refusal(t, s.admit("a", now), ReasonQueue)
		assert.Equal(t, 4, r.Queued)
		assert.Equal(t, 4, r.Share)
		assert.Contains(t, r.Error(), "queue of 4 requests is full")

		// b holds less than an equal share (4 over a and b) of the full queue.
		require.NoError(t, s.admit("b", now))
		require.NoError(t, s.admit("b", now))
		refusal(t, s.admit("b", now), ReasonQueue)
		refusal(t, s.admit("a", now), ReasonQueue)
		assert.Equal(t, 6, entries(s))

		// a's entries drain below the capacity: anyone is admitted again.
		for range 3 {
			s.unreserve("a")
		}
		require.NoError(t, s.admit("b", now))
		require.NoError(t, s.admit("a", now))
	})
	t.Run("a granted entry leaves the queue", func(t *testing.T) {
		s := newScheduler(1, 2, 1, 0, 0, false, nil)
		x := hold(t, s, "a")
		require.NoError(t, s.admit("a", now))
		require.NoError(t, s.admit("a", now))
		refusal(t, s.admit("a", now), reasonTenantQueue)
		require.Empty(t, finish(t, s, x))
		refusal(t, s.admit("a", now), reasonTenantQueue) // the release granted nothing: nobody waits
		s.unreserve("a")
		require.NoError(t, s.admit("a", now))
	})
}

// TestAdmitBound: however many tenants arrive past the queue's capacity,
// each admitted only while under an equal share, the entries stay under
// twice the capacity, and a tenant that holds nothing is admitted while
// the queue is full of another's entries.
func TestAdmitBound(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	for _, capacity := range []int{1, 2, 3, 4, 8, 64} {
		t.Run(fmt.Sprint(capacity), func(t *testing.T) {
			s := newScheduler(1, capacity, 0, 0, 0, false, nil)
			for range capacity {
				require.NoError(t, s.admit("a", now))
			}
			if capacity > 1 {
				require.NoError(t, s.admit("b", now), "b holds nothing of a queue full of a's entries")
				s.unreserve("b")
			}
			for i := range 4 * capacity {
				tenant := fmt.Sprint("t", i)
				for n := 0; ; n++ {
					err := s.admit(tenant, now)
					if err != nil {
						r := refusal(t, err, ReasonQueue)
						assert.Equal(t, n, r.Queued)
						break
					}
					require.Less(t, entries(s), 2*capacity, "tenant %s's entry %d", tenant, n)
				}
			}
		})
	}
}

// TestRetryAfter: a refusal's Retry-After is positive and lands on a
// whole second; the refusals of a burst come back spread over seconds at
// no more than the tenant's pace per second (its queue share, and its
// places per turn); a shorter observed turn shortens the estimate.
func TestRetryAfter(t *testing.T) {
	now := time.Unix(1_000_000, 300_000_000)
	for _, tc := range []struct {
		name           string
		places, queued int
		turn           time.Duration // observed; 0: none (the one-second default)
		pace           int           // the most retries promised per second
	}{
		{"defaults", 1, 3, 0, 1},
		{"places per turn", 2, 8, 0, 2},
		{"short turns, queue share", 2, 3, 100 * time.Millisecond, 3},
		{"short turns, places", 1, 16, 250 * time.Millisecond, 4},
		{"long turns", 1, 4, 3 * time.Second, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newScheduler(tc.places, 64, 0, 0, 0, false, func(string) Shares {
				return Shares{Places: tc.places, Queued: tc.queued}
			})
			if tc.turn > 0 {
				s.observeTurn(tc.turn)
			}
			turn := orDefault(tc.turn, time.Second)
			for range tc.queued {
				require.NoError(t, s.admit("a", now))
			}
			drain := turn * time.Duration((tc.queued+tc.places)/tc.places)
			const burst = 40
			perSecond := map[int64]int{}
			for range burst {
				r := refusal(t, s.admit("a", now), reasonTenantQueue)
				require.Positive(t, r.RetryAfter)
				at := now.Add(r.RetryAfter)
				require.Zero(t, at.Nanosecond(), "Retry-After %v from %v is not on a whole second", r.RetryAfter, now)
				require.GreaterOrEqual(t, r.RetryAfter, drain, "before the tenant's queue drains")
				perSecond[at.Unix()]++
			}
			for sec, n := range perSecond {
				assert.LessOrEqual(t, n, tc.pace, "second %d", sec-now.Unix())
			}
			assert.GreaterOrEqual(t, len(perSecond), (burst+tc.pace-1)/tc.pace)
			require.NoError(t, s.admit("b", now), "b's share is its own")
		})
	}

	t.Run("a shorter turn shortens it", func(t *testing.T) {
		s := newScheduler(1, 64, 0, 0, 0, false, func(string) Shares { return Shares{Queued: 4} })
		for range 4 {
			require.NoError(t, s.admit("a", now))
		}
		before := refusal(t, s.admit("a", now), reasonTenantQueue).RetryAfter
		assert.Equal(t, 5*time.Second+700*time.Millisecond, before, "5 one-second turns, rounded up to a second")
		s.observeTurn(10 * time.Millisecond)
		after := refusal(t, s.admit("a", now), reasonTenantQueue).RetryAfter
		assert.Less(t, after, before)
		assert.Equal(t, 700*time.Millisecond, after, "the next second")
		// Promises for seconds that have passed are forgotten.
		later := now.Add(10 * time.Second)
		assert.Equal(t, 700*time.Millisecond, refusal(t, s.admit("a", later), reasonTenantQueue).RetryAfter)
		s.mu.Lock()
		assert.Equal(t, map[int64]int{later.Unix() + 1: 1}, s.promised["a"])
		s.mu.Unlock()
	})
}

// orDefault returns d, or def when d is 0.
func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

// kvState is the scheduler's KV accounting.
func kvState(s *scheduler) (used int64, idle []*slot) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.kvUsed, slices.Clone(s.idle)
}

// idleBytes is the bytes of the idle slots.
func idleBytes(s *scheduler) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var n int64
	for _, sl := range s.idle {
		n += int64(sl.positions) * s.kvPerPos
	}
	return n
}

// TestSchedulerKV: under a KV budget, a turn past its tenant's KV share
// waits while another tenant's turn that fits is granted, and is granted
// once its tenant frees some; idle slots are evicted (least recently used
// first) only when that makes a waiter fit; after every release the bytes
// counted are the idle slots'.
func TestSchedulerKV(t *testing.T) {
	// 100 bytes in all, 60 per tenant, one byte per position.
	s := newScheduler(4, 16, 4, 100, 1, false, func(string) Shares { return Shares{KVBytes: 60} })
	ctx := context.Background()
	used := func() int64 { u, _ := kvState(s); return u }

	a1 := enqueue(t, s, ctx, "a1", "a", 40)
	require.True(t, a1.granted(s))
	a2 := enqueue(t, s, ctx, "a2", "a", 30)
	assert.False(t, a2.granted(s), "a's 40 and 30 are past its 60")
	b1 := enqueue(t, s, ctx, "b1", "b", 50)
	assert.True(t, b1.granted(s), "b fits while a waits")
	c1 := enqueue(t, s, ctx, "c1", "c", 10)
	require.True(t, c1.granted(s))
	assert.Equal(t, int64(100), used())

	// c's slot goes idle; d's 15 would fit only by evicting more than
	// the 10 idle bytes: d waits, and nothing is evicted.
	require.Empty(t, finish(t, s, c1))
	_, idle := kvState(s)
	require.Len(t, idle, 1)
	cSlot := idle[0]
	assert.Equal(t, "c", cSlot.tenant)
	d1 := enqueue(t, s, ctx, "d1", "d", 15)
	assert.False(t, d1.granted(s))
	_, idle = kvState(s)
	assert.Equal(t, []*slot{cSlot}, idle, "evicting c's slot would not make d fit")
	assert.Equal(t, int64(100), used())

	// a frees its 40: a2 is granted a's idle slot (40 positions, within
	// the share, no new bytes); d still does not fit.
	closing := finish(t, s, a1)
	assert.Empty(t, closing)
	require.True(t, a2.granted(s))
	g2, _, err := a2.result(t)
	require.NoError(t, err)
	require.NotNil(t, g2.sl, "a's idle slot")
	aSlot := g2.sl
	assert.Equal(t, 40, g2.positions)
	assert.Equal(t, int64(40), g2.charge)
	assert.False(t, d1.granted(s))
	assert.Equal(t, int64(100), used())

	// b frees its 50: d fits by evicting idle slots, oldest first, until
	// it does (c's 10 is not enough; b's 50 goes too).
	gb, _, err := b1.result(t)
	require.NoError(t, err)
	closing = finish(t, s, b1)
	require.True(t, d1.granted(s))
	require.Len(t, closing, 2)
	assert.Same(t, cSlot, closing[0])
	assert.Equal(t, "b", closing[1].tenant)
	assert.Equal(t, gb.positions, closing[1].positions)
	assert.Equal(t, int64(40+15), used())

	// Everyone done: the bytes counted are the idle slots', a's and d's.
	require.Empty(t, finish(t, s, a2))
	require.Empty(t, finish(t, s, d1))
	u, idle := kvState(s)
	assert.Equal(t, idleBytes(s), u)
	assert.Equal(t, int64(40+15), u)
	assert.Len(t, idle, 2)
	assert.Same(t, aSlot, idle[0])
	assert.Equal(t, 0, s.queued())
	assert.Equal(t, 0, entries(s))
}

// TestSchedulerKVGrownSlot: a tenant's idle slot that grew past what its
// share leaves is not taken for a smaller turn that fits in a new one.
func TestSchedulerKVGrownSlot(t *testing.T) {
	share := int64(100)
	s := newScheduler(4, 16, 4, 200, 1, false, func(string) Shares { return Shares{KVBytes: share} })
	ctx := context.Background()
	a1 := enqueue(t, s, ctx, "a1", "a", 50)
	a2 := enqueue(t, s, ctx, "a2", "a", 40)
	require.True(t, a1.granted(s))
	require.True(t, a2.granted(s))
	require.Empty(t, finish(t, s, a1))
	s.mu.Lock()
	share = 60 // 40 running: the idle 50 no longer fits beside it
	s.mu.Unlock()

	a3 := enqueue(t, s, ctx, "a3", "a", 10)
	require.True(t, a3.granted(s))
	g, closing, err := a3.result(t)
	require.NoError(t, err)
	assert.Empty(t, closing)
	assert.Nil(t, g.sl, "a new slot")
	assert.Equal(t, 10, g.positions)
	assert.Equal(t, int64(10), g.charge)
	u, idle := kvState(s)
	assert.Equal(t, int64(50+40+10), u)
	require.Len(t, idle, 1)
	assert.Equal(t, 50, idle[0].positions)

	require.Empty(t, finish(t, s, a2))
	require.Empty(t, finish(t, s, a3))
	u, _ = kvState(s)
	assert.Equal(t, idleBytes(s), u)
}

// TestSchedulerKVIdleLimit: idle slots past maxIdle are evicted on
// release, least recently used first, and the KV bytes they held are no
// longer counted.
func TestSchedulerKVIdleLimit(t *testing.T) {
	s := newScheduler(4, 16, 2, 1000, 2, false, nil)
	ctx := context.Background()
	var ps []*pending
	for i, tenant := range []string{"a", "b", "c", "d"} {
		p := enqueue(t, s, ctx, tenant, tenant, 10*(i+1))
		require.True(t, p.granted(s))
		ps = append(ps, p)
	}
	assert.Empty(t, finish(t, s, ps[0]))
	assert.Empty(t, finish(t, s, ps[1]))
	closing := finish(t, s, ps[2])
	require.Len(t, closing, 1)
	assert.Equal(t, "a", closing[0].tenant)
	closing = finish(t, s, ps[3])
	require.Len(t, closing, 1)
	assert.Equal(t, "b", closing[0].tenant)
	u, idle := kvState(s)
	require.Len(t, idle, 2)
	assert.Equal(t, int64(2*(30+40)), u)
}

// TestSchedulerKVHeadLeaves: a turn that leaves the head of its tenant's
// queue (cancelled while waiting for KV) hands the free place on to the
// turn behind it when that one fits, without waiting for another release.
func TestSchedulerKVHeadLeaves(t *testing.T) {
	s := newScheduler(4, 16, 4, 100, 1, false, nil)
	a1 := enqueue(t, s, context.Background(), "a1", "a", 60)
	require.True(t, a1.granted(s))
	ctx, cancel := context.WithCancelCause(context.Background())
	big := enqueue(t, s, ctx, "big", "a", 50)
	small := enqueue(t, s, context.Background(), "small", "a", 30)
	assert.False(t, big.granted(s))
	assert.False(t, small.granted(s), "FIFO within a tenant: behind big")

	cause := errors.New("client gone")
	cancel(cause)
	_, _, err := big.result(t)
	require.ErrorIs(t, err, cause)
	assert.True(t, small.granted(s), "a place and 40 bytes are free")
	require.Empty(t, finish(t, s, small))
	require.Empty(t, finish(t, s, a1))
	assert.Equal(t, 0, entries(s))
}

// parked waits until n goroutines wait in s's wait, parked in its select:
// a channel closed from now on wakes them on that channel.
func parked(t *testing.T, s *scheduler, n int) {
	t.Helper()
	frame := fmt.Sprintf("serving.(*scheduler).wait(%p,", s)
	require.Eventually(t, func() bool {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		count := 0
		for _, g := range strings.Split(string(buf), "\n\n") {
			if strings.Contains(g, " [select") && strings.Contains(g, frame) {
				count++
			}
		}
		return count == n
	}, eventually, time.Millisecond)
}

// TestSchedulerCancel: a waiter whose context ends returns the cause and
// gives its entry back; one granted as it gives up passes the place on.
func TestSchedulerCancel(t *testing.T) {
	cause := errors.New("client gone")

	t.Run("waiting", func(t *testing.T) {
		s := newScheduler(1, 8, 8, 0, 0, false, nil)
		x := hold(t, s, "x")
		ctx, cancel := context.WithCancelCause(context.Background())
		a0 := enqueue(t, s, ctx, "a0", "a", 0)
		a1 := enqueue(t, s, context.Background(), "a1", "a", 0)
		b0 := enqueue(t, s, ctx, "b0", "b", 0)
		require.Equal(t, 3, s.queued())
		require.Equal(t, 3, entries(s))

		cancel(cause)
		for _, p := range []*pending{a0, b0} {
			_, _, err := p.result(t)
			require.ErrorIs(t, err, cause, p.name)
		}
		assert.Equal(t, 1, s.queued())
		assert.Equal(t, 1, entries(s))
		require.Empty(t, finish(t, s, x))
		assert.True(t, a1.granted(s), "the one left is next")
		require.Empty(t, finish(t, s, a1))
		assert.Equal(t, 0, s.queued())
		assert.Equal(t, 0, entries(s))
		s.mu.Lock()
		assert.Empty(t, s.ring)
		assert.Empty(t, s.queues)
		assert.Empty(t, s.reserved)
		s.mu.Unlock()
	})

	t.Run("granted while giving up", func(t *testing.T) {
		// The context ends under the scheduler's lock, in the grant that
		// picks a0 (sharesOf is called there), so a0's wait sees the end
		// first and its grant once it has the lock.
		ctx, cancel := context.WithCancelCause(context.Background())
		var armed atomic.Bool
		s := newScheduler(1, 8, 8, 0, 0, false, func(tenant string) Shares {
			if tenant == "a" && armed.Load() {
				cancel(cause)
			}
			return Shares{}
		})
		x := hold(t, s, "x")
		a0 := enqueue(t, s, ctx, "a0", "a", 0)
		b0 := enqueue(t, s, context.Background(), "b0", "b", 0)
		parked(t, s, 2)
		armed.Store(true)
		require.Empty(t, finish(t, s, x))
		_, _, err := a0.result(t)
		require.ErrorIs(t, err, cause)
		require.Eventually(t, func() bool { return b0.granted(s) }, eventually, time.Millisecond,
			"a0 passes its place on")
		assert.Equal(t, 0, s.Held("a"))
		assert.Equal(t, 1, s.Held("b"))
		require.Empty(t, finish(t, s, b0))
		assert.Equal(t, 0, s.queued())
		assert.Equal(t, 0, entries(s))
	})
}
