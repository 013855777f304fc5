//go:build linux && !race

package server

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rssNow is the process's resident set (VmRSS of /proc/self/status), in bytes.
func rssNow(t testing.TB) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	require.NoError(t, err)
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			require.NoError(t, err)
			return kb << 10
		}
	}
	t.Fatal("no VmRSS in /proc/self/status")
	return 0
}

// wideSchemaRequest is a completion request whose response_format is an
// object schema of n integer properties, all required, named after salt
// (so that each salt is a schema of its own to compile).
func wideSchemaRequest(n int, salt string) string {
	var b strings.Builder
	b.WriteString(`{"prompt": "Once", "max_tokens": 4, "response_format": {"type": "json_schema", "json_schema": {"name": "wide", "schema": `)
	b.WriteString(`{"type": "object", "additionalProperties": false, "properties": {`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"%s%05d": {"type": "integer"}`, salt, i)
	}
	b.WriteString(`}, "required": [`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"%s%05d"`, salt, i)
	}
	b.WriteString(`]}}}}`)
	return b.String()
}

// TestSchemaFlood: tenant a sends 60 requests at once, each with a
// 10,000-property JSON schema of its own (all required, 381 KB), which
// the schema converter refuses as too large once past 20,000 rules (50 ms
// here; 0.6 s before its required names were matched by name). Tenant
// a's share of the queue (32) refuses the rest with 429s and a
// Retry-After before their bodies are read; its share of the preparation
// pool (half the cores) decodes and converts the admitted ones one after
// another, each schema once. Meanwhile 5 small requests of tenant b, one
// after another, each complete within 1 s, and the process's RSS stays
// within 200 MiB of its level before the flood. (Bodies decoded before
// admission, all 60 at once, made b's first request take up to 0.8 s
// and the RSS grow by 100 MiB; with 3.8 MB schemas, 2.4 s and 1.1 GiB.)
// Not under -race, whose shadow memory is most of the RSS.
func TestSchemaFlood(t *testing.T) {
	const (
		flood      = 60
		properties = 10000
		rssBound   = 200 << 20
	)
	tenants := threeTenants(`{"step_deadline": "2s", "max_concurrent": 16, "requests_per_minute": 100000, "memory_pages": 64}`,
		`{"max_concurrent": 64}`, `{}`, `{}`)
	s := startServerConfig(t, tenants, Config{Queue: 64})
	hc := floodClient(flood + 8)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const small = `{"prompt": "Once", "max_tokens": 4, "ignore_eos": true, "temperature": 0}`
	code, _, b := completion(t, s, keyB, small)
	require.Equal(t, http.StatusOK, code, string(b))

	// One such request alone (tenant c's), then again: compiled once.
	one := wideSchemaRequest(properties, "c")
	alone := func() time.Duration {
		start := time.Now()
		code, b := s.do(t, "POST", "/v1/completions", keyC, []byte(one))
		require.Equal(t, http.StatusBadRequest, code, string(b))
		require.Equal(t, "unsupported_schema", errorOf(t, b).Code, string(b))
		return time.Since(start)
	}
	first, again := alone(), alone()
	t.Logf("one %d-property schema (%d KB): refused in %v, again (cached) in %v", properties, len(one)>>10, first, again)

	bodies := make([]string, flood)
	for i := range bodies {
		bodies[i] = wideSchemaRequest(properties, fmt.Sprintf("a%02d_", i))
	}
	baseline := rssNow(t)
	var peak atomic.Int64
	sampled := make(chan struct{})
	stop := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			peak.Store(max(peak.Load(), rssNow(t)))
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()

	type outcome struct {
		code       int
		errCode    string
		retryAfter string
		err        error
	}
	outcomes := make([]outcome, flood)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range outcomes {
		wg.Add(1)
		go func(o *outcome, body string) {
			defer wg.Done()
			resp, b, err := post(ctx, hc, s.URL, "/v1/completions", keyA, body)
			if err != nil {
				o.err = err
				return
			}
			o.code, o.retryAfter = resp.StatusCode, resp.Header.Get("Retry-After")
			var e errorBody
			if jsonUnmarshal(b, &e) == nil && e.Error != nil {
				o.errCode = e.Error.Code
			}
		}(&outcomes[i], bodies[i])
	}
	var latencies []time.Duration
	for range 5 {
		start := time.Now()
		resp, b, err := post(ctx, hc, s.URL, "/v1/completions", keyB, small)
		require.NoError(t, err)
		latencies = append(latencies, time.Since(start))
		require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
	}
	wg.Wait()
	flooded := time.Since(start)
	close(stop)
	<-sampled

	counts := map[string]int{}
	for i, o := range outcomes {
		require.NoError(t, o.err, "request %d", i)
		counts[fmt.Sprintf("%d %s", o.code, o.errCode)]++
		switch o.code {
		case http.StatusTooManyRequests:
			assert.NotEmpty(t, o.retryAfter, "request %d: a 429 without Retry-After", i)
		case http.StatusBadRequest:
			assert.Equal(t, "unsupported_schema", o.errCode, "request %d", i)
		default:
			t.Errorf("request %d: %d %s", i, o.code, o.errCode)
		}
	}
	growth := peak.Load() - baseline
	t.Logf("flood of %d: %v in %v; tenant b's requests meanwhile %v; RSS %d MiB before, peak %d MiB (+%d MiB); %d schemas compiled",
		flood, counts, flooded, latencies, baseline>>20, peak.Load()>>20, growth>>20, s.srv.compiled.len())
	assert.Positive(t, counts["429 tenant_queue_full"], "tenant a's flood was never refused")
	for i, d := range latencies {
		assert.Less(t, d, time.Second, "tenant b's request %d", i)
	}
	assert.Less(t, growth, int64(rssBound), "RSS over the flood")
	// Each admitted schema compiled once: one entry per refused schema
	// (and tenant c's), within the cache's bounds.
	assert.Equal(t, min(counts["400 unsupported_schema"], compileCachePerTenant)+1, s.srv.compiled.len())
}
