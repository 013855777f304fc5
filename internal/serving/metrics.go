package serving

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the core's Prometheus series. Register Collectors on the
// registry that serves them.
type Metrics struct {
	Tokens         *prometheus.CounterVec   // tenant
	PrefillRate    prometheus.Histogram     // tokens/s per turn
	DecodeRate     prometheus.Histogram     // tokens/s per turn
	QueueWait      *prometheus.HistogramVec // tenant; seconds from Start to a place
	PolicyPerStep  prometheus.Histogram     // seconds per decode step inside policies
	PluginFailures *prometheus.CounterVec   // tenant, kind
	Active         prometheus.Gauge         // turns holding a place
	Cancelled      prometheus.Counter       // turns stopped by cancellation (client, failed write, shutdown)
	CancelPolls    prometheus.Histogram     // decode steps polled after the turn's context ended
	PassSeconds    prometheus.Histogram     // wall time of one batched pass
	PassSequences  prometheus.Histogram     // sequences in one batched pass
	PassTokens     prometheus.Histogram     // token rows in one batched pass
	// Speculative decoding: draft tokens verified and accepted, by
	// tenant, and the rows of each verify span (a token and its drafts).
	DraftTokens         *prometheus.CounterVec // tenant
	AcceptedDraftTokens *prometheus.CounterVec // tenant
	VerifyRows          prometheus.Histogram
}

// NewMetrics returns unregistered series.
func NewMetrics() *Metrics {
	m := &Metrics{}
	m.Tokens = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "realizar_generated_tokens_total",
		Help: "Tokens generated, by tenant."}, []string{"tenant"})
	rateBuckets := prometheus.ExponentialBuckets(10, 2, 14)
	m.PrefillRate = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "realizar_prefill_tokens_per_second",
		Help: "Prompt processing speed per request.", Buckets: rateBuckets})
	m.DecodeRate = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "realizar_decode_tokens_per_second",
		Help: "Generation speed per request.", Buckets: rateBuckets})
	m.QueueWait = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "realizar_queue_wait_seconds",
		Help: "Time from a prepared request to its place in the batch, by tenant.", Buckets: prometheus.ExponentialBuckets(0.001, 2, 16)},
		[]string{"tenant"})
	m.PolicyPerStep = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "realizar_policy_seconds_per_step",
		Help: "Time inside the sampler and stop policy per decode step.", Buckets: prometheus.ExponentialBuckets(1e-6, 2, 20)})
	m.PluginFailures = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "realizar_plugin_failures_total",
		Help: "Plugin failures by tenant and kind (trap, timeout, memory, bad_token, failed, bad_result, other)."},
		[]string{"tenant", "kind"})
	m.Active = prometheus.NewGauge(prometheus.GaugeOpts{Name: "realizar_active_sessions",
		Help: "Requests running now (places of the batch held)."})
	m.Cancelled = prometheus.NewCounter(prometheus.CounterOpts{Name: "realizar_cancelled_turns_total",
		Help: "Turns stopped because the client went away, stopped reading, or the server shut down."})
	m.CancelPolls = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "realizar_cancel_latency_steps",
		Help:    "Decode steps a cancelled turn ran after its context ended (0 or 1: the poll is once per step).",
		Buckets: []float64{0, 1, 2, 4, 8}})
	m.PassSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "realizar_batch_pass_seconds",
		Help: "Wall time of one batched forward pass over the running sequences.", Buckets: prometheus.ExponentialBuckets(1e-4, 2, 18)})
	m.PassSequences = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "realizar_batch_pass_sequences",
		Help: "Sequences in one batched forward pass.", Buckets: prometheus.LinearBuckets(1, 1, 16)})
	m.PassTokens = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "realizar_batch_pass_tokens",
		Help: "Token rows (decode tokens and prompt chunks) in one batched forward pass.", Buckets: prometheus.ExponentialBuckets(1, 2, 12)})
	m.DraftTokens = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "realizar_draft_tokens_total",
		Help: "Draft tokens verified by speculative decoding, by tenant."}, []string{"tenant"})
	m.AcceptedDraftTokens = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "realizar_draft_accepted_tokens_total",
		Help: "Draft tokens the request's own sampler chain chose (kept), by tenant."}, []string{"tenant"})
	m.VerifyRows = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "realizar_verify_pass_rows",
		Help: "Rows of one sequence's verify span in a batched pass: its last token and the drafts after it.", Buckets: prometheus.LinearBuckets(2, 2, 16)})
	return m
}

// Collectors are the series to register.
func (m *Metrics) Collectors() []prometheus.Collector {
	return []prometheus.Collector{m.Tokens, m.PrefillRate, m.DecodeRate, m.QueueWait, m.PolicyPerStep,
		m.PluginFailures, m.Active, m.Cancelled, m.CancelPolls, m.PassSeconds, m.PassSequences, m.PassTokens,
		m.DraftTokens, m.AcceptedDraftTokens, m.VerifyRows}
}
