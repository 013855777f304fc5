package server

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/realizar-host/realizar-host/internal/serving"
)

// metrics are the server's Prometheus series, in its own registry: the
// serving core's and the requests'.
type metrics struct {
	*serving.Metrics
	reg      *prometheus.Registry
	requests *prometheus.CounterVec // tenant, endpoint, outcome
	// embeddedTokens counts the tokens of POST /v1/embeddings's inputs.
	embeddedTokens *prometheus.CounterVec // tenant
	queued         prometheus.GaugeFunc
}

func newMetrics(queued func() float64) *metrics {
	m := &metrics{Metrics: serving.NewMetrics(), reg: prometheus.NewRegistry()}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "realizar_requests_total",
		Help: "Requests by tenant, endpoint and outcome (ok, client_error, rate_limited, plugin_error, server_error, cancelled)."},
		[]string{"tenant", "endpoint", "outcome"})
	m.embeddedTokens = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "realizar_embedded_tokens_total",
		Help: "Input tokens embedded (POST /v1/embeddings), by tenant."}, []string{"tenant"})
	m.queued = prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "realizar_queued_requests",
		Help: "Requests waiting for a place in the batch."}, queued)
	m.reg.MustRegister(m.Collectors()...)
	m.reg.MustRegister(m.requests, m.embeddedTokens, m.queued,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}
