package server

import (
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
				most = max(most, s.srv.core.Held("a"))
				time.Sleep(100 * time.Microsecond)
			}
		}
	}()
	for i := range 16 {
		send(keyA, fmt.Sprintf("a%d", i))
	}
	require.Eventually(t, func() bool { return s.srv.core.Queued() >= 16-capA-2 }, 10*time.Second, time.Millisecond)
	send(keyB, "b")
	wg.Wait()
	close(stop)
	assert.LessOrEqual(t, <-maxHeld, capA, "tenant a held more places than its max_sequences")
	i := slices.Index(order, "b")
	require.GreaterOrEqual(t, i, 0)
	assert.LessOrEqual(t, i, capA+1, "b finished after %d of a's requests: %v", i, order)
}
