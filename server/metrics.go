package server

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// metrics are the server's Prometheus series, in its own registry.
type metrics struct {
	reg            *prometheus.Registry
	requests       *prometheus.CounterVec   // tenant, endpoint, outcome
	tokens         *prometheus.CounterVec   // tenant
	prefillRate    prometheus.Histogram     // tokens/s per request
	decodeRate     prometheus.Histogram     // tokens/s per request
	queueWait      *prometheus.HistogramVec // tenant
	policyPerStep  prometheus.Histogram     // seconds per decode step inside policies
	pluginFailures *prometheus.CounterVec   // tenant, kind
	active         prometheus.Gauge
	queued         prometheus.GaugeFunc
	cancelled      prometheus.Counter
	cancelPolls    prometheus.Histogram // decode steps polled after the client went away
	passSeconds    prometheus.Histogram // wall time of one batched pass
	passSequences  prometheus.Histogram // sequences in one batched pass
	passTokens     prometheus.Histogram // token rows in one batched pass
}

func newMetrics(queued func() float64) *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "realizar_requests_total",
		Help: "Requests by tenant, endpoint and outcome (ok, client_error, rate_limited, plugin_error, server_error, cancelled)."},
		[]string{"tenant", "endpoint", "outcome"})
	m.tokens = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "realizar_generated_tokens_total",
		Help: "Tokens generated, by tenant."}, []string{"tenant"})
	rateBuckets := prometheus.ExponentialBuckets(10, 2, 14)
	m.prefillRate = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "realizar_prefill_tokens_per_second",
		Help: "Prompt processing speed per request.", Buckets: rateBuckets})
	m.decodeRate = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "realizar_decode_tokens_per_second",
		Help: "Generation speed per request.", Buckets: rateBuckets})
	m.queueWait = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "realizar_queue_wait_seconds",
		Help: "Time from admission to the model, by tenant.", Buckets: prometheus.ExponentialBuckets(0.001, 2, 16)},
		[]string{"tenant"})
	m.policyPerStep = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "realizar_policy_seconds_per_step",
		Help: "Time inside the sampler and stop policy per decode step.", Buckets: prometheus.ExponentialBuckets(1e-6, 2, 20)})
	m.pluginFailures = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "realizar_plugin_failures_total",
		Help: "Plugin failures by tenant and kind (trap, timeout, memory, bad_token, failed, bad_result, other)."},
		[]string{"tenant", "kind"})
	m.active = prometheus.NewGauge(prometheus.GaugeOpts{Name: "realizar_active_sessions",
		Help: "Requests running now (places of the batch held)."})
	m.queued = prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "realizar_queued_requests",
		Help: "Requests waiting for the model."}, queued)
	m.cancelled = prometheus.NewCounter(prometheus.CounterOpts{Name: "realizar_cancelled_turns_total",
		Help: "Turns stopped because the client went away or the server shut down."})
	m.cancelPolls = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "realizar_cancel_latency_steps",
		Help:    "Decode steps a cancelled turn ran after its context ended (0 or 1: the poll is once per step).",
		Buckets: []float64{0, 1, 2, 4, 8}})
	m.passSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "realizar_batch_pass_seconds",
		Help: "Wall time of one batched forward pass over the running sequences.", Buckets: prometheus.ExponentialBuckets(1e-4, 2, 18)})
	m.passSequences = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "realizar_batch_pass_sequences",
		Help: "Sequences in one batched forward pass.", Buckets: prometheus.LinearBuckets(1, 1, 16)})
	m.passTokens = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "realizar_batch_pass_tokens",
		Help: "Token rows (decode tokens and prompt chunks) in one batched forward pass.", Buckets: prometheus.ExponentialBuckets(1, 2, 12)})
	m.reg.MustRegister(m.requests, m.tokens, m.prefillRate, m.decodeRate, m.queueWait, m.policyPerStep,
		m.pluginFailures, m.active, m.queued, m.cancelled, m.cancelPolls, m.passSeconds, m.passSequences, m.passTokens,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}
