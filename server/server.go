package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/realizar-host/realizar-host/engine"
	"github.com/realizar-host/realizar-host/host"
	"github.com/realizar-host/realizar-host/tokenizer"
)

// Model is the loaded model the server generates with.
type Model struct {
	// ID is the name clients pass as "model" (GET /v1/models lists it).
	ID string
	// Forward is the forward requests take turns on (the first slot's).
	Forward engine.ArchForward
	// NewForward, when set, makes a further forward over the same weights
	// with a KV cache of its own (model.Model.NewStep behind a
	// StepForward), for Config.Slots > 1; nil means one slot, Forward.
	NewForward func() (engine.ArchForward, error)
	// Tokenizer is the model's vocabulary.
	Tokenizer *tokenizer.Tokenizer
}

// Config is what New needs. Tenants, Store, Host and Builtins are required.
type Config struct {
	Tenants  *Tenants
	Store    Store
	Host     *host.Host
	Builtins Builtins
	// Queue is the most requests waiting for the model; 0 means 64.
	Queue int
	// Slots is how many KV caches the server keeps, one per tenant, the
	// least recently used given to a new tenant when all are taken; 0 means
	// 1. More slots keep more tenants' prompt caches when they take turns,
	// at the cost of one KV cache each (it grows to the longest turn), and
	// need Model.NewForward.
	Slots int
	// Logger receives one line per request; nil means slog.Default().
	Logger *slog.Logger
}

// Server is the HTTP server's handler. Create it with New, make it ready
// with SetModel once the model is loaded (until then generation endpoints
// answer 503 and /ready is not ready).
type Server struct {
	tenants  *Tenants
	store    Store
	host     *host.Host
	builtins Builtins
	log      *slog.Logger
	sched    *Scheduler
	metrics  *metrics
	mux      *http.ServeMux
	created  int64

	ready atomic.Bool
	model *Model // set once by SetModel, before ready

	idSeq atomic.Uint64

	// slots are the Sessions turns run on, each over a forward of its own
	// and holding one tenant's tokens, made as tenants come (at most
	// maxSlots); used only by the request that holds the scheduler.
	slots    []*slot
	maxSlots int
	turns    uint64         // counts turns, for least-recently-used eviction
	wg       sync.WaitGroup // turns in flight
}

// New returns a Server for cfg.
func New(cfg Config) (*Server, error) {
	if cfg.Tenants == nil || cfg.Store == nil || cfg.Host == nil || cfg.Builtins == nil {
		return nil, errors.New("server: Config needs Tenants, Store, Host and Builtins")
	}
	if cfg.Queue == 0 {
		cfg.Queue = 64
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Slots < 0 {
		return nil, fmt.Errorf("server: Slots is %d, must be >= 0", cfg.Slots)
	}
	s := &Server{tenants: cfg.Tenants, store: cfg.Store, host: cfg.Host, builtins: cfg.Builtins, maxSlots: max(cfg.Slots, 1),
		log: cfg.Logger, sched: NewScheduler(cfg.Queue), mux: http.NewServeMux(), created: time.Now().Unix()}
	s.metrics = newMetrics(func() float64 { return float64(s.sched.Queued()) })
	s.routes()
	return s, nil
}

// SetModel makes the server ready to generate with m. Call it once.
func (s *Server) SetModel(m *Model) {
	s.model = m
	s.ready.Store(true)
}

// Wait blocks until no turn is running (after the http.Server has shut down).
func (s *Server) Wait() { s.wg.Wait() }

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

func (s *Server) routes() {
	s.mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	s.mux.HandleFunc("GET /ready", func(w http.ResponseWriter, _ *http.Request) {
		if !s.ready.Load() {
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "loading"})
			return
		}
		writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
	})
	s.mux.Handle("GET /metrics", promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{}))
	s.mux.HandleFunc("GET /v1/models", s.authed("models", s.needModel(s.handleModels)))
	s.mux.HandleFunc("POST /v1/completions", s.authed("completions", s.needModel(s.handleCompletions)))
	s.mux.HandleFunc("POST /v1/chat/completions", s.authed("chat", s.needModel(s.handleChat)))
	s.mux.HandleFunc("POST /tokenize", s.authed("tokenize", s.needModel(s.handleTokenize)))
	s.mux.HandleFunc("POST /detokenize", s.authed("detokenize", s.needModel(s.handleDetokenize)))
	s.mux.HandleFunc("POST /v1/plugins", s.authed("plugins", s.needModel(s.handleUpload)))
	s.mux.HandleFunc("GET /v1/plugins", s.authed("plugins", s.handleListPlugins))
	s.mux.HandleFunc("DELETE /v1/plugins/{sum}", s.authed("plugins", s.handleDeletePlugin))
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, notFound("unknown_url", "unknown endpoint %s %s", r.Method, r.URL.Path))
	})
}

// handler is an authenticated endpoint: it returns an error to send, or
// nil once it has written its response.
type handler func(w http.ResponseWriter, r *http.Request, t *Tenant) error

// authed authenticates the request, runs h, sends its error, counts the
// outcome and logs one line.
func (s *Server) authed(endpoint string, h handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		t, err := s.tenants.Authenticate(r.Header.Get("Authorization"))
		tenant := "-"
		if err == nil {
			tenant = t.Name
			err = h(w, r, t)
		}
		outcome := "ok"
		if err != nil {
			e := asAPIError(err)
			outcome = outcomeOf(e)
			if errors.Is(err, context.Canceled) || r.Context().Err() != nil {
				outcome = "cancelled"
			} else if !errors.Is(err, errWritten) {
				writeError(w, e)
			}
			s.log.Info("request", "tenant", tenant, "endpoint", endpoint, "status", e.Status, "outcome", outcome,
				"error", err.Error(), "ms", time.Since(start).Milliseconds())
		} else {
			s.log.Info("request", "tenant", tenant, "endpoint", endpoint, "status", 200, "outcome", outcome,
				"ms", time.Since(start).Milliseconds())
		}
		s.metrics.requests.WithLabelValues(tenant, endpoint, outcome).Inc()
	}
}

// errWritten marks an error whose response (an SSE error event) was
// already written.
var errWritten = errors.New("server: error already sent")

// outcomeOf names an error's outcome for metrics.
func outcomeOf(e *APIError) string {
	switch {
	case e.Type == typePlugin:
		return "plugin_error"
	case e.Status == http.StatusTooManyRequests:
		return "rate_limited"
	case e.Status >= 500:
		return "server_error"
	}
	return "client_error"
}

// needModel answers 503 until SetModel.
func (s *Server) needModel(h handler) handler {
	return func(w http.ResponseWriter, r *http.Request, t *Tenant) error {
		if !s.ready.Load() {
			return &APIError{Status: http.StatusServiceUnavailable, Type: typeServer, Code: "loading",
				RetryAfter: time.Second, Message: "the model is still loading"}
		}
		return h(w, r, t)
	}
}
