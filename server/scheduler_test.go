package server

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// waitQueued waits until s has n waiters.
func waitQueued(t *testing.T, s *scheduler, n int) {
	t.Helper()
	require.Eventually(t, func() bool { return s.Queued() == n }, 5*time.Second, time.Millisecond)
}

// TestSchedulerFairness: with tenant a's 16 requests queued, tenant b's one
// request waits at most one turn; within a tenant the order is FIFO.
func TestSchedulerFairness(t *testing.T) {
	s := newScheduler(64)
	ctx := context.Background()
	hold, err := s.Acquire(ctx, "a")
	require.NoError(t, err)

	var mu sync.Mutex
	var order []string
	var wg sync.WaitGroup
	enqueue := func(tenant string, i int) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			release, err := s.Acquire(ctx, tenant)
			if !assert.NoError(t, err) {
				return
			}
			mu.Lock()
			order = append(order, fmt.Sprintf("%s%d", tenant, i))
			mu.Unlock()
			release()
		}()
	}
	for i := range 16 {
		enqueue("a", i)
		waitQueued(t, s, i+1) // one at a time, so FIFO order is known
	}
	enqueue("b", 0)
	waitQueued(t, s, 17)
	hold()
	wg.Wait()

	require.Len(t, order, 17)
	assert.Equal(t, "a0", order[0], "the head of the ring goes first")
	assert.Equal(t, "b0", order[1], "b waits at most one turn")
	for i, got := range append(order[:1:1], order[2:]...) {
		assert.Equal(t, fmt.Sprintf("a%d", i), got, "FIFO within a tenant")
	}
}

func TestSchedulerRoundRobin(t *testing.T) {
	s := newScheduler(64)
	ctx := context.Background()
	hold, err := s.Acquire(ctx, "x")
	require.NoError(t, err)
	var mu sync.Mutex
	var order []string
	var wg sync.WaitGroup
	n := 0
	for _, tenant := range []string{"a", "a", "a", "b", "b", "c"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			release, err := s.Acquire(ctx, tenant)
			require.NoError(t, err)
			mu.Lock()
			order = append(order, tenant)
			mu.Unlock()
			release()
		}()
		n++
		waitQueued(t, s, n)
	}
	hold()
	wg.Wait()
	assert.Equal(t, []string{"a", "b", "c", "a", "b", "a"}, order)
}

func TestSchedulerQueueFull(t *testing.T) {
	s := newScheduler(2)
	ctx, cancel := context.WithCancel(context.Background())
	hold, err := s.Acquire(ctx, "a")
	require.NoError(t, err)
	errs := make(chan error, 2)
	for range 2 {
		go func() { _, err := s.Acquire(ctx, "a"); errs <- err }()
	}
	waitQueued(t, s, 2)
	_, err = s.Acquire(ctx, "b")
	var e *APIError
	require.ErrorAs(t, err, &e)
	assert.Equal(t, http.StatusTooManyRequests, e.Status)
	assert.Positive(t, e.RetryAfter)

	cancel() // queued waiters leave
	for range 2 {
		assert.ErrorIs(t, <-errs, context.Canceled)
	}
	assert.Equal(t, 0, s.Queued())
	hold()
	release, err := s.Acquire(context.Background(), "b")
	require.NoError(t, err, "the model is free again")
	release()
}

// TestFairnessOverHTTP: tenant a sends 16 requests at once; it never holds
// more than its max_sequences places of the batch (the rest queue), and
// tenant b's single request, arriving after them, is admitted at once to a
// free place and finishes before most of a's.
func TestFairnessOverHTTP(t *testing.T) {
	s := startServer(t, testTenantsFile(), 64)
	capA := max(DefaultParallel/2, 1) // the default max_sequences
	body := []byte(`{"prompt": "Once upon a time", "max_tokens": 24, "top_k": 40, "seed": 1}`)
	var mu sync.Mutex
	var order []string
	var wg sync.WaitGroup
	send := func(key, name string) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, b := s.do(t, "POST", "/v1/completions", key, body)
			assert.Equal(t, http.StatusOK, code, string(b))
			mu.Lock()
			order = append(order, name)
			mu.Unlock()
		}()
	}
	stop := make(chan struct{})
	maxHeld := make(chan int)
	go func() {
		most := 0
		for {
			select {
			case <-stop:
				maxHeld <- most
				return
			default:
				most = max(most, s.srv.sched.Held("a"))
				time.Sleep(100 * time.Microsecond)
			}
		}
	}()
	for i := range 16 {
		send(keyA, fmt.Sprintf("a%d", i))
	}
	require.Eventually(t, func() bool { return s.srv.sched.Queued() >= 16-capA-2 }, 10*time.Second, time.Millisecond)
	send(keyB, "b")
	wg.Wait()
	close(stop)
	assert.LessOrEqual(t, <-maxHeld, capA, "tenant a held more places than its max_sequences")
	i := slices.Index(order, "b")
	require.GreaterOrEqual(t, i, 0)
	assert.LessOrEqual(t, i, capA+1, "b finished after %d of a's requests: %v", i, order)
}

// TestBatchSchedulerCaps: with 4 places and a cap of 2 per tenant, tenant
// a's third request queues while places are free, b's are granted at once,
// and a freed place goes to the first tenant in the ring under its cap.
func TestBatchSchedulerCaps(t *testing.T) {
	s := newBatchScheduler(64, 4, func(string) int { return 2 })
	ctx := context.Background()
	a1, err := s.Acquire(ctx, "a")
	require.NoError(t, err)
	a2, err := s.Acquire(ctx, "a")
	require.NoError(t, err)
	granted := make(chan string, 8)
	wait := func(tenant string) {
		go func() {
			release, err := s.Acquire(ctx, tenant)
			if assert.NoError(t, err) {
				granted <- tenant
				t.Cleanup(release)
			}
		}()
	}
	wait("a") // a3: over a's cap
	waitQueued(t, s, 1)
	assert.Equal(t, 2, s.Held("a"))
	b1, err := s.Acquire(ctx, "b")
	require.NoError(t, err, "b takes a free place past a's queued request")
	wait("b") // b2: the fourth place
	assert.Equal(t, "b", <-granted)
	wait("b") // b3: over b's cap and no place
	waitQueued(t, s, 2)
	a1() // a3 goes first: it is first in the ring and under a's cap again
	assert.Equal(t, "a", <-granted)
	assert.Equal(t, 2, s.Held("a"))
	b1() // b3 now
	assert.Equal(t, "b", <-granted)
	assert.Equal(t, 0, s.Queued())
	a1() // a release is once only
	assert.Equal(t, 2, s.Held("a"))
	a2()
	assert.Equal(t, 1, s.Held("a"))
}
