package server

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// histogram returns a histogram's sample count and sum from the registry.
func histogram(t *testing.T, s *Server, name string) (count uint64, sum float64) {
	families, err := s.metrics.reg.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() == name {
			for _, m := range f.GetMetric() {
				count += m.GetHistogram().GetSampleCount()
				sum += m.GetHistogram().GetSampleSum()
			}
		}
	}
	return count, sum
}

// TestClientDisconnectCancels: closing the connection mid-stream stops the
// turn within one decode step and frees the model at once. The turn's
// sampler (testdata/slowargmax.wat) spins ~10 ms a step, so its 240 tokens
// cannot all be decoded into the socket's buffers before the disconnect is
// seen, however fast the machine (a fast CI machine did that with the
// built-in sampler, and the turn ended uncancelled).
func TestClientDisconnectCancels(t *testing.T) {
	s := startServer(t, testTenantsFile(), 8)
	wasm, err := os.ReadFile(filepath.Join("testdata", "slowargmax.wasm"))
	require.NoError(t, err)
	sum := s.upload(t, keyC, wasm)
	ctx, cancel := context.WithCancel(context.Background())
	body := fmt.Sprintf(`{"prompt": "Once upon a time", "max_tokens": 240, "stream": true, `+
		`"realizar": {"sampler": {"plugin": %q}}}`, sum)
	req, err := http.NewRequestWithContext(ctx, "POST", s.URL+"/v1/completions", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+keyC)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", b)
	}
	r := bufio.NewReader(resp.Body)
	// One event: the turn is decoding.
	line, err := r.ReadBytes('\n')
	require.NoError(t, err)
	require.True(t, bytes.HasPrefix(line, []byte("data: ")), "%q", line)
	cancel()
	_ = resp.Body.Close()

	require.Eventually(t, func() bool { return testutil.ToFloat64(s.srv.metrics.Cancelled) == 1 },
		5*time.Second, time.Millisecond, "the turn was not cancelled")
	count, steps := histogram(t, s.srv, "realizar_cancel_latency_steps")
	require.Equal(t, uint64(1), count)
	assert.LessOrEqual(t, steps, 1.0, "tokens decoded after the client went away")
	generated := testutil.ToFloat64(s.srv.metrics.Tokens.WithLabelValues("c"))
	assert.Less(t, generated, 240.0, "the turn ran to its budget")

	// The model is free: another tenant's request runs at once.
	start := time.Now()
	code, b := s.do(t, "POST", "/v1/completions", keyB, []byte(`{"prompt": "hi", "max_tokens": 2, "top_k": 1}`))
	require.Equal(t, http.StatusOK, code, string(b))
	assert.Less(t, time.Since(start), 2*time.Second)
	assert.Eventually(t, func() bool {
		return testutil.ToFloat64(s.srv.metrics.requests.WithLabelValues("c", "completions", "cancelled")) == 1
	}, 5*time.Second, time.Millisecond)
}
