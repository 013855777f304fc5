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
func waitQueued(t *testing.T, s *Scheduler, n int) {
	t.Helper()
	require.Eventually(t, func() bool { return s.Queued() == n }, 5*time.Second, time.Millisecond)
}

// TestSchedulerFairness: with tenant a's 16 requests queued, tenant b's one
// request waits at most one turn; within a tenant the order is FIFO.
func TestSchedulerFairness(t *testing.T) {
	s := NewScheduler(64)
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
	s := NewScheduler(64)
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
	s := NewScheduler(2)
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

// TestFairnessOverHTTP: tenant a's 16 requests are queued behind a running
// one when tenant b's single request arrives; b's completes after at most
// one more of a's.
func TestFairnessOverHTTP(t *testing.T) {
	s := startServer(t, testTenantsFile(), 64)
	body := []byte(`{"prompt": "Once upon a time", "max_tokens": 12, "top_k": 40, "seed": 1}`)
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
	for i := range 17 {
		send(keyA, fmt.Sprintf("a%d", i))
	}
	// One runs, 16 wait (the first may already be done on a fast machine:
	// then at least 15 wait).
	require.Eventually(t, func() bool { return s.srv.sched.Queued() >= 15 }, 10*time.Second, time.Millisecond)
	send(keyB, "b")
	wg.Wait()
	i := slices.Index(order, "b")
	require.GreaterOrEqual(t, i, 0)
	assert.LessOrEqual(t, i, 2, "b finished after %d of a's requests: %v", i, order)
}
