package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/realizar-host/realizar-host/forward"
	"github.com/realizar-host/realizar-host/host"
	"github.com/realizar-host/realizar-host/internal/draft"
	"github.com/realizar-host/realizar-host/internal/serving"
	"github.com/realizar-host/realizar-host/internal/tenancy"
	"github.com/realizar-host/realizar-host/tokenizer"
)

// Model is the loaded model the server generates with.
type Model struct {
	// ID is the name clients pass as "model" (GET /v1/models lists it).
	ID string
	// Forward is the model's first forward (its context length is the
	// server's); without NewForward it is the only one, and requests take
	// turns on it.
	Forward forward.ArchForward
	// NewForward, when set, makes a further forward over the same weights
	// with a KV cache of its own (model.Model.NewSequence behind a
	// SequenceForward): one per running sequence and per idle slot. Forwards
	// that are *forward.SequenceForward over steps implementing
	// forward.Batcher decode together in one batched pass. nil means one
	// sequence at a time on Forward.
	NewForward func() (forward.ArchForward, error)
	// KVBytesPerPosition is one position's KV cache across all layers, in
	// bytes (model.Model.KVBytesPerPosition), for the KV budget; 0 means
	// unknown (no budget is enforced).
	KVBytesPerPosition int64
	// Tokenizer is the model's vocabulary.
	Tokenizer *tokenizer.Tokenizer
	// RenderChat renders the tokenizer's chat template for
	// /v1/chat/completions, within the request's admission and under its
	// context: chatsandbox.Renderer.Render, whose deadline and memory cap
	// no template escapes. nil renders in-process (tokenizer.RenderJinja,
	// no budget): for trusted templates only.
	RenderChat func(ctx context.Context, template string, msgs []tokenizer.Message, opts tokenizer.ChatOptions) (string, error)
	// Embedder makes POST /v1/embeddings's vectors; nil (a model with no
	// pooling type) makes every embeddings request a 400.
	Embedder Embedder
	// Draft is a draft model over the same vocabulary (serve
	// --draft-model, checked with draft.CheckVocab), loaded once: each
	// request that drafts with it gets a KV cache of its own. nil: none.
	Draft *draft.Model
}

// Config is what New needs. Tenants, Store, Host and Builtins are required.
type Config struct {
	// Tenants authenticates requests: a *tenancy.Tenants (a fixed set) or
	// a store that follows changes.
	Tenants  tenancy.TenantSource
	Store    tenancy.Store
	Host     *host.Host
	Builtins Builtins
	// Queue is the most requests waiting for a place in the batch; 0 means 64.
	Queue int
	// Parallel is the most sequences decoding together in one batched pass
	// (the places of the batch); 0 means DefaultParallel. Each running
	// sequence holds a KV cache of its own. Without Model.NewForward it is 1.
	Parallel int
	// BatchTokens is the most token rows one pass processes: every running
	// sequence's decode token, then chunks of new prompts (chunked prefill),
	// so a long prompt never stalls the others for its whole prefill; 0
	// means DefaultBatchTokens.
	BatchTokens int
	// Slots is how many idle KV caches the server keeps after their turns,
	// each holding one tenant's last tokens, so that the tenant's next
	// request reuses its prefix (the least recently used is dropped first);
	// 0 means Parallel.
	Slots int
	// KVMemory caps the bytes of all KV caches together (running and
	// idle); 0 means no cap. Idle caches are dropped to make room; a
	// request that does not fit its tenant's share (tenancy.Limits.MaxKVBytes)
	// waits in its tenant's queue, and one that could never fit is a 400.
	// Needs Model.KVBytesPerPosition.
	KVMemory int64
	// WriteTimeout bounds each write to a client: one that accepts
	// nothing for that long is dropped and its turn cancelled (its place
	// and KV cache free at the next pass). 0 means DefaultWriteTimeout.
	// Generation never waits for a client: a turn's output is buffered.
	WriteTimeout time.Duration
	// Logger receives one line per request; nil means slog.Default().
	Logger *slog.Logger
	// Responses keeps stored responses (POST /v1/responses with store):
	// nil means in memory (tenancy.MemResponses), a server/pgstore.Store
	// shares them between replicas.
	Responses tenancy.ResponseStore
	// Lookup drafts by n-gram lookup over each request's own prompt and
	// output when the request names no draft source (serve --spec
	// lookup; a request's realizar.speculative.lookup overrides it).
	Lookup bool
	// DraftModel drafts with Model.Draft when the request names no draft
	// source (serve --spec draft-model; a request's
	// realizar.speculative.draft_model overrides it). SetModel refuses it
	// without a Model.Draft; it excludes Lookup.
	DraftModel bool
	// DraftMax is the longest draft when the request does not say, in
	// [0, draft.MaxDraft]; 0 means the draft source's default.
	DraftMax int
}

// Config's defaults: DefaultParallel and DefaultBatchTokens are the
// serving core's (measured as the best on the project's 2-core test
// machine, BENCHMARKS.md); DefaultWriteTimeout is long enough for a client
// on a slow link to read a chunk, short enough that a stalled one gives
// its connection back soon.
const (
	DefaultParallel     = serving.DefaultParallel
	DefaultBatchTokens  = serving.DefaultBatchTokens
	DefaultWriteTimeout = 10 * time.Second
)

// Server is the HTTP server's handler. Create it with New, make it ready
// with SetModel once the model is loaded (until then generation endpoints
// answer 503 and /ready is not ready). Turn execution, the queue, the
// places of the batch and the KV slots belong to its serving core.
type Server struct {
	tenants  tenancy.TenantSource
	store    tenancy.Store
	host     *host.Host
	builtins Builtins
	log      *slog.Logger
	cfg      Config
	metrics  *metrics
	prep     *prepPool
	compiled *compileCache
	// responses are the stored Responses (POST /v1/responses with store).
	responses tenancy.ResponseStore
	mux       *http.ServeMux
	created   int64

	ready atomic.Bool
	model *Model        // set once by SetModel, before ready
	core  *serving.Core // set once by SetModel, before ready

	idSeq atomic.Uint64
	idle  idleSamplers // structured-output samplers between requests
}

// New returns a Server for cfg. A negative Queue, Parallel, BatchTokens,
// Slots or KVMemory is an error.
func New(cfg Config) (*Server, error) {
	if cfg.Tenants == nil || cfg.Store == nil || cfg.Host == nil || cfg.Builtins == nil {
		return nil, errors.New("server: Config needs Tenants, Store, Host and Builtins")
	}
	if cfg.Queue < 0 || cfg.Parallel < 0 || cfg.BatchTokens < 0 || cfg.Slots < 0 || cfg.KVMemory < 0 || cfg.WriteTimeout < 0 {
		return nil, fmt.Errorf("server: Queue %d, Parallel %d, BatchTokens %d, Slots %d, KVMemory %d, WriteTimeout %v: none may be negative",
			cfg.Queue, cfg.Parallel, cfg.BatchTokens, cfg.Slots, cfg.KVMemory, cfg.WriteTimeout)
	}
	if cfg.Lookup && cfg.DraftModel {
		return nil, errors.New("server: Lookup and DraftModel: one default draft source")
	}
	if cfg.DraftMax < 0 || cfg.DraftMax > draft.MaxDraft {
		return nil, fmt.Errorf("server: DraftMax %d is outside [0, %d]", cfg.DraftMax, draft.MaxDraft)
	}
	if cfg.Queue == 0 {
		cfg.Queue = serving.DefaultQueue
	}
	if cfg.WriteTimeout == 0 {
		cfg.WriteTimeout = DefaultWriteTimeout
	}
	// Parallel, BatchTokens and Slots take their defaults in the serving
	// core (serving.New); the queue's size is read here too (shares).
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	s := &Server{tenants: cfg.Tenants, store: cfg.Store, host: cfg.Host, builtins: cfg.Builtins, cfg: cfg,
		log: cfg.Logger, mux: http.NewServeMux(), created: time.Now().Unix(),
		prep: newPrepPool(runtime.GOMAXPROCS(0)), compiled: newCompileCache(), responses: cfg.Responses}
	if s.responses == nil {
		s.responses = tenancy.NewMemResponses()
	}
	s.metrics = newMetrics(func() float64 {
		if !s.ready.Load() {
			return 0
		}
		return float64(s.core.Queued())
	})
	s.routes()
	return s, nil
}

// SetModel makes the server ready to generate with m and starts its
// serving core. Call it once. A Model without a Forward or a Tokenizer is
// an error.
func (s *Server) SetModel(m *Model) error {
	if m == nil || m.Forward == nil || m.Tokenizer == nil {
		return errors.New("server: SetModel needs a Model with a Forward and a Tokenizer")
	}
	if s.cfg.DraftModel && m.Draft == nil {
		return errors.New("server: Config.DraftModel needs a Model with a Draft")
	}
	cfg := s.cfg
	core, err := serving.New(serving.Model{Forward: m.Forward, NewForward: m.NewForward,
		KVBytesPerPosition: m.KVBytesPerPosition, Vocab: m.Tokenizer.Renderer(tokenizer.RenderOptions{})},
		serving.Config{Parallel: cfg.Parallel, BatchTokens: cfg.BatchTokens, Queue: cfg.Queue, Slots: cfg.Slots,
			KVMemory: cfg.KVMemory, Shares: s.shares, Metrics: s.metrics.Metrics, PluginFailure: pluginFailureKind})
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	s.core = core
	s.model = m
	s.ready.Store(true)
	return nil
}

// shares is a tenant's share of the core: its limits, or by default half
// of the places, the queue and the KV budget when the server has several
// tenants (all of them for the one anonymous tenant). The set is read at
// each call: a store's tenants change.
func (s *Server) shares(tenant string) serving.Shares {
	ts := s.tenants.Tenants()
	var l tenancy.Limits
	if t := ts.Tenant(tenant); t != nil {
		l = t.Limits
	}
	sh := serving.Shares{Places: l.MaxSequences, Queued: l.MaxQueued, KVBytes: l.MaxKVBytes}
	if ts.Len() > 1 {
		parallel := s.core.Parallel()
		if sh.Places == 0 {
			sh.Places = max(parallel/2, 1)
		}
		if sh.Queued == 0 {
			sh.Queued = max(s.cfg.Queue/2, 1)
		}
		if sh.KVBytes == 0 {
			sh.KVBytes = max(s.cfg.KVMemory/2, 1)
		}
	}
	return sh
}

// Wait blocks until no turn is running (after the http.Server has shut
// down), then stops the serving core.
func (s *Server) Wait() {
	if !s.ready.Load() {
		return
	}
	s.core.Close()
}

// CancelTurns ends every running and waiting turn with an error its
// client receives: a JSON error, or an SSE error event and [DONE] (at
// the end of a shutdown's grace period).
func (s *Server) CancelTurns() {
	if s.ready.Load() {
		s.core.CancelAll(errShuttingDown)
	}
}

// MetricsHandler serves the server's Prometheus metrics (GET, any path).
// Their series are labelled by tenant name, so the API's listener does not
// serve them: mount this on a listener of its own, for the operator's
// scraper only (realizar-host serve --metrics-addr).
func (s *Server) MetricsHandler() http.Handler {
	return promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{})
}

// ServeHTTP implements http.Handler. On a connection of GuardListener's, a
// request head that held both Content-Length and Transfer-Encoding is a
// 400 that closes the connection, before routing.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if ambiguousFraming(r) {
		w.Header().Set("Connection", "close")
		writeError(w, &APIError{Status: http.StatusBadRequest, Type: typeInvalidRequest, Code: "ambiguous_framing",
			Message: "a request on this connection has both Content-Length and Transfer-Encoding (RFC 9112 §6.1); the connection is closed"})
		s.log.Info("request", "endpoint", r.URL.Path, "status", http.StatusBadRequest, "outcome", "client_error",
			"error", "ambiguous framing: Content-Length and Transfer-Encoding", "remote", r.RemoteAddr)
		return
	}
	s.mux.ServeHTTP(w, r)
}

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
	s.mux.HandleFunc("GET /v1/models", s.authed("models", s.needModel(s.handleModels)))
	s.mux.HandleFunc("POST /v1/completions", s.authed("completions", s.needModel(s.handleCompletions)))
	s.mux.HandleFunc("POST /v1/chat/completions", s.authed("chat", s.needModel(s.handleChat)))
	s.mux.HandleFunc("POST /v1/messages", s.authedAs("messages", writeAnthropicError, s.needModel(s.handleMessages)))
	s.mux.HandleFunc("POST /v1/messages/count_tokens", s.authedAs("count_tokens", writeAnthropicError, s.needModel(s.handleCountTokens)))
	s.mux.HandleFunc("POST /v1/responses", s.authed("responses", s.needModel(s.handleResponses)))
	s.mux.HandleFunc("GET /v1/responses/{id}", s.authed("responses", s.handleGetResponse))
	s.mux.HandleFunc("DELETE /v1/responses/{id}", s.authed("responses", s.handleDeleteResponse))
	s.mux.HandleFunc("GET /v1/responses/{id}/input_items", s.authed("responses", s.handleInputItems))
	s.mux.HandleFunc("POST /v1/embeddings", s.authed("embeddings", s.needModel(s.handleEmbeddings)))
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
type handler func(w http.ResponseWriter, r *http.Request, t *tenancy.Tenant) error

// authed authenticates the request, runs h, sends its error, counts the
// outcome and logs one line.
func (s *Server) authed(endpoint string, h handler) http.HandlerFunc {
	return s.authedAs(endpoint, writeError, h)
}

// authedAs is authed with the API's error shape: send writes an error
// response (writeError for OpenAI's, writeAnthropicError for Anthropic's).
func (s *Server) authedAs(endpoint string, send func(http.ResponseWriter, *APIError), h handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := newRequestID()
		r = r.WithContext(context.WithValue(r.Context(), requestIDKey{}, id))
		w.Header().Set("X-Request-Id", id)
		t, err := s.authenticate(r)
		tenant := "-"
		if err == nil {
			tenant = t.Name
			err = h(w, r, t)
		}
		outcome := "ok"
		if err != nil {
			e := clientError(r.Context(), err)
			outcome = outcomeOf(e)
			if errors.Is(err, context.Canceled) || errors.Is(err, errClientStalled) || r.Context().Err() != nil {
				outcome = "cancelled"
			} else if !errors.Is(err, errWritten) {
				_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(s.cfg.WriteTimeout))
				send(w, e)
			}
			status := e.Status
			if errors.Is(err, errWritten) || errors.Is(err, errClientStalled) {
				status = http.StatusOK // the error went inside a stream that had begun
			}
			s.log.Info("request", "request_id", id, "tenant", tenant, "endpoint", endpoint, "status", status,
				"outcome", outcome, "error", logText(err), "ms", time.Since(start).Milliseconds())
		} else {
			s.log.Info("request", "request_id", id, "tenant", tenant, "endpoint", endpoint, "status", 200,
				"outcome", outcome, "ms", time.Since(start).Milliseconds())
		}
		s.metrics.requests.WithLabelValues(tenant, endpoint, outcome).Inc()
	}
}

// authenticate is the tenant of r's API key: Authorization's bearer
// token, or Anthropic's x-api-key header. More than one Authorization or
// x-api-key header, or both kinds, is a 400 before any key is looked at:
// which one counts is not for the server to guess (a proxy may have
// checked the other).
func (s *Server) authenticate(r *http.Request) (*tenancy.Tenant, error) {
	auth, apiKey := r.Header.Values("Authorization"), r.Header.Values("X-Api-Key")
	if n := len(auth) + len(apiKey); n > 1 {
		return nil, &APIError{Status: http.StatusBadRequest, Type: typeInvalidRequest, Code: "duplicate_authorization",
			Message: fmt.Sprintf("the request has %d Authorization and x-api-key headers; send one", n)}
	}
	if len(apiKey) == 1 {
		return s.tenants.Tenants().Authenticate("Bearer " + apiKey[0])
	}
	return s.tenants.Tenants().Authenticate(r.Header.Get("Authorization"))
}

// logText is err's text on one line, without errWritten's marker.
func logText(err error) string {
	return strings.ReplaceAll(strings.TrimPrefix(err.Error(), errWritten.Error()+"\n"), "\n", "; ")
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
	return func(w http.ResponseWriter, r *http.Request, t *tenancy.Tenant) error {
		if !s.ready.Load() {
			return &APIError{Status: http.StatusServiceUnavailable, Type: typeServer, Code: "loading",
				RetryAfter: time.Second, Message: "the model is still loading"}
		}
		return h(w, r, t)
	}
}
