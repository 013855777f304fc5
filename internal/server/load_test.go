package server

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	rtmetrics "runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/realizar-host/realizar-host/internal/tenancy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// loadDeadline is the per-step deadline of tenants b and c, whose plugins
// misbehave in the load test. Tenant a keeps the test file's 2 s: on a
// loaded machine a good step can take over 100 ms of wall time.
const loadDeadline = 100 * time.Millisecond

func loadTenantsFile() []byte {
	return fmt.Appendf(nil, `{
  "defaults": {"step_deadline": "2s", "max_concurrent": 32, "requests_per_minute": 100000, "memory_pages": 64},
  "tenants": [
    {"name": "a", "key_sha256": [%q]},
    {"name": "b", "key_sha256": [%q], "limits": {"step_deadline": %q}},
    {"name": "c", "key_sha256": [%q], "limits": {"step_deadline": %q}}
  ]
}`, tenancy.HashKey(keyA), tenancy.HashKey(keyB), loadDeadline.String(), tenancy.HashKey(keyC), loadDeadline.String())
}

// loadOutcome is one request of the load test.
type loadOutcome struct {
	text    string
	tokens  int64
	err     error
	latency time.Duration // whole request
	held    time.Duration // time holding the model, from X-Realizar-Turn-Ms (failed requests)
}

// liveHeap is the live heap after two GCs (the second empties the
// sync.Pool victim caches), in bytes.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	s := []rtmetrics.Sample{{Name: "/gc/heap/live:bytes"}}
	rtmetrics.Read(s)
	return s[0].Value.Uint64()
}

// TestLoad: 3 tenants × 16 concurrent streaming requests. Tenant a's are
// well-behaved; tenant b's sampler loops forever, tenant c's traps. Every
// good request must produce exactly its lone text, every bad one must fail
// within its deadline, and goroutines, live wazero instances and the live
// heap must come back within 10%.
func TestLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("load test: not in -short")
	}
	s := startServer(t, loadTenantsFile(), 64)
	badB := s.upload(t, keyB, testdataWasm(t, "bad.wasm"))
	badC := s.upload(t, keyC, testdataWasm(t, "bad.wasm"))
	transport := &http.Transport{MaxIdleConnsPerHost: 64}
	hc := &http.Client{Transport: transport}
	ctx := context.Background()
	const perTenant = 16

	type job struct {
		key    string
		params openai.CompletionNewParams
		opts   []option.RequestOption
	}
	good := func(i int) job {
		return job{keyA, openai.CompletionNewParams{Model: "serve-fixture",
			Prompt:    openai.CompletionNewParamsPromptUnion{OfString: openai.String(fmt.Sprintf("Story number %d:", i))},
			MaxTokens: openai.Int(24), Seed: openai.Int(int64(i))}, []option.RequestOption{topK}}
	}
	bad := func(key, sum string, seed int64) job { // bad.wasm: seed 1 loops in sample, seed 2 traps
		return job{key, openai.CompletionNewParams{Model: "serve-fixture",
			Prompt:    openai.CompletionNewParamsPromptUnion{OfString: openai.String("Once")},
			MaxTokens: openai.Int(24), Seed: openai.Int(seed)},
			[]option.RequestOption{option.WithJSONSet("realizar", map[string]any{"sampler": map[string]any{"plugin": sum}})}}
	}
	run := func(j job) loadOutcome {
		var resp *http.Response
		c := openai.NewClient(option.WithBaseURL(s.URL+"/v1/"), option.WithAPIKey(j.key), option.WithMaxRetries(0),
			option.WithHTTPClient(hc))
		start := time.Now()
		stream := c.Completions.NewStreaming(ctx, j.params, append(j.opts, option.WithResponseInto(&resp))...)
		var o loadOutcome
		var text strings.Builder
		for stream.Next() {
			ch := stream.Current()
			if len(ch.Choices) > 0 {
				text.WriteString(ch.Choices[0].Text)
			}
			if ch.Usage.TotalTokens > 0 {
				o.tokens = ch.Usage.CompletionTokens
			}
		}
		o.err, o.text, o.latency = stream.Err(), text.String(), time.Since(start)
		o.held = o.latency
		if resp != nil {
			if ms, err := strconv.ParseFloat(resp.Header.Get("X-Realizar-Turn-Ms"), 64); err == nil {
				o.held = time.Duration(ms * float64(time.Millisecond))
			}
		}
		return o
	}

	// Lone runs: the reference texts, and a warm-up of every path (label
	// sets, compiled modules, pools) before the baseline is taken.
	lone := make([]string, perTenant)
	for i := range perTenant {
		o := run(good(i))
		require.NoError(t, o.err)
		lone[i] = o.text
	}
	for _, j := range []job{bad(keyB, badB, 1), bad(keyC, badC, 2)} {
		var e *openai.Error
		require.ErrorAs(t, run(j).err, &e)
		t.Logf("a bad request alone: %d %s: %s", e.StatusCode, e.Code, e.Message)
	}
	// A concurrent round fills the batch's places and its idle KV slots
	// (at most Config.Slots, kept for the tenants' prompt caches) as the
	// load will, so that the baseline holds the memory the server keeps by
	// design and the check below finds only what it should not keep.
	var warm sync.WaitGroup
	for i := range perTenant {
		for _, j := range []job{good(i), bad(keyB, badB, 1), bad(keyC, badC, 2)} {
			warm.Add(1)
			go func() { defer warm.Done(); _ = run(j) }()
		}
	}
	warm.Wait()
	transport.CloseIdleConnections()
	time.Sleep(50 * time.Millisecond)
	baseG, baseI, baseH := runtime.NumGoroutine(), s.host.LiveInstances(), liveHeap()

	jobs := make([]job, 0, 3*perTenant)
	for i := range perTenant {
		jobs = append(jobs, good(i), bad(keyB, badB, 1), bad(keyC, badC, 2))
	}
	out := make([]loadOutcome, len(jobs))
	var wg sync.WaitGroup
	start := time.Now()
	for i, j := range jobs {
		wg.Add(1)
		go func() { defer wg.Done(); out[i] = run(j) }()
	}
	wg.Wait()
	wall := time.Since(start)

	var lat []time.Duration
	var tokens int64
	var maxHeld time.Duration
	for i, o := range out {
		switch i % 3 {
		case 0:
			if assert.NoError(t, o.err, "good request %d", i/3) {
				assert.Equal(t, lone[i/3], o.text, "good request %d differs from its lone run", i/3)
			}
			lat = append(lat, o.latency)
			tokens += o.tokens
		case 1, 2:
			want := "timeout"
			if i%3 == 2 {
				want = "trap"
			}
			var e *openai.Error
			if assert.ErrorAs(t, o.err, &e, "bad request %d", i) {
				assert.Equal(t, want, e.Code)
				assert.Equal(t, typePlugin, e.Type)
				assert.Contains(t, e.Message, "sampler bad 1.0.0")
			}
			// The deadline plus the prompt's prefill and the plugin's
			// instantiation, in passes shared with the others (its place in
			// the batch is held that long; the other sequences go on). The
			// slack is wide because the machine is shared (under load 10-17
			// held times reached 0.5-0.9 s): what must never happen is a
			// looping plugin holding its place for seconds.
			assert.Less(t, o.held, loadDeadline+raceSlowdown*1500*time.Millisecond, "bad request %d held its place too long", i)
			maxHeld = max(maxHeld, o.held)
		}
	}
	slices.Sort(lat)
	p := func(q float64) time.Duration { return lat[min(len(lat)-1, int(q*float64(len(lat))))] }
	t.Logf("load: %d requests (%d good) in %v: %.1f requests/s, %.1f good tokens/s; good latency p50 %v p99 %v; "+
		"a bad request held the model at most %v (deadline %v)",
		len(jobs), perTenant, wall.Round(time.Millisecond), float64(len(jobs))/wall.Seconds(),
		float64(tokens)/wall.Seconds(), p(0.50).Round(time.Millisecond), p(0.99).Round(time.Millisecond),
		maxHeld.Round(time.Millisecond), loadDeadline)

	transport.CloseIdleConnections()
	within := func(now, base float64) bool { return now <= base*1.10+0.5 }
	require.Eventually(t, func() bool { return within(float64(runtime.NumGoroutine()), float64(baseG)) },
		5*time.Second, 10*time.Millisecond, "goroutines: %d, baseline %d", runtime.NumGoroutine(), baseG)
	assert.True(t, within(float64(s.host.LiveInstances()), float64(baseI)), "wazero instances: %d, baseline %d",
		s.host.LiveInstances(), baseI)
	h := liveHeap()
	assert.True(t, within(float64(h), float64(baseH)), "live heap: %d, baseline %d", h, baseH)
	t.Logf("after: goroutines %d (baseline %d), wazero instances %d (%d), live heap %d (%d)",
		runtime.NumGoroutine(), baseG, s.host.LiveInstances(), baseI, h, baseH)
}
