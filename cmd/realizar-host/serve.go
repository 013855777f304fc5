package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/realizar-host/realizar-host/forward"
	"github.com/realizar-host/realizar-host/host"
	"github.com/realizar-host/realizar-host/internal/draft"
	"github.com/realizar-host/realizar-host/internal/plugins"
	"github.com/realizar-host/realizar-host/internal/server"
	"github.com/realizar-host/realizar-host/internal/server/pgstore"
	"github.com/realizar-host/realizar-host/internal/tenancy"
)

// serveOptions are serve's flags.
type serveOptions struct {
	model      modelFlags
	addr       string
	metrics    string
	tenants    string
	pluginDir  string
	store      string
	cacheBytes int64
	diskBytes  int64
	queue      int
	slots      int
	parallel   int
	batchTok   int
	kvMiB      int64
	grace      time.Duration
	writeTime  time.Duration
	readTime   time.Duration
	idleTime   time.Duration
	logJSON    bool
	pooling    string
	spec       string
	draftModel string
	draftMax   int
}

func newServeCmd() *cobra.Command {
	var o serveOptions
	cmd := &cobra.Command{
		Use:   "serve --model M.gguf [--addr 127.0.0.1:8080] [--tenants FILE] [--plugin-dir DIR | --store postgres://...]",
		Short: "Serve the model over an OpenAI-compatible HTTP API with per-tenant WebAssembly policies",
		Long: "Serve one model over HTTP: /v1/completions, /v1/chat/completions (SSE with stream: true),\n" +
			"/v1/messages, /v1/responses, /v1/embeddings (with a pooling type: the file's or --pooling),\n" +
			"/v1/models, /v1/plugins (upload, list, delete), /tokenize, /detokenize, /health, /ready.\n" +
			"--metrics-addr serves the Prometheus metrics (GET /metrics, labelled by tenant) on a listener of\n" +
			"their own, for the operator's scraper: keep it off the public network.\n" +
			"Without --tenants one anonymous tenant is served, on a loopback address only.\n" +
			"--store (or $REALIZAR_STORE) keeps tenants and plugins in PostgreSQL, shared by every replica\n" +
			"(realizar-host tenants manages them); it excludes --tenants and --plugin-dir.\n" +
			"SIGINT or SIGTERM stops accepting, lets running requests finish for --grace, then ends the rest\n" +
			"with an error (a JSON 503, or an SSE error event then [DONE]) and exits 0.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return serve(cmd.Context(), &o) },
	}
	f := cmd.Flags()
	o.model.register(cmd)
	f.StringVar(&o.addr, "addr", "127.0.0.1:8080", "listen address")
	f.StringVar(&o.metrics, "metrics-addr", "", "listen address of GET /metrics (Prometheus, labelled by tenant: not for the public network), e.g. 127.0.0.1:9464; default: no metrics")
	f.StringVar(&o.tenants, "tenants", "", "tenants file (JSON: names, API key sha256s, limits)")
	f.StringVar(&o.pluginDir, "plugin-dir", "", "directory of uploaded plugins and compiled code (default: in memory)")
	f.StringVar(&o.store, "store", "", "PostgreSQL URL of the shared tenants, plugins and stored responses, postgres://... (default $"+storeEnv+")")
	f.Int64Var(&o.cacheBytes, "module-cache-bytes", 256<<20, "bytes of compiled plugin modules kept on this node, counted as module sizes (LRU; 0: no bound)")
	f.Int64Var(&o.diskBytes, "compiled-dir-bytes", host.DefaultCompilationCacheDirBytes, "bytes of compiled code kept in --plugin-dir's .compiled/, counted as file sizes (LRU; 0: no bound)")
	f.IntVar(&o.queue, "queue", 64, "requests admitted and waiting for a place in the batch, shared by the tenants (each holds at most its max_queued, by default half); more get 429")
	f.IntVar(&o.parallel, "parallel", server.DefaultParallel, "sequences decoding together in one batched pass (continuous batching; each holds a KV cache of its own, in device memory under --gpu)")
	f.IntVar(&o.batchTok, "batch-tokens", server.DefaultBatchTokens, "most token rows per pass: decode tokens first, then chunks of new prompts")
	f.IntVar(&o.slots, "slots", 0, "idle KV caches kept after their turns, each with one tenant's prompt cache (default: --parallel)")
	f.Int64Var(&o.kvMiB, "kv-memory", 0, "MiB all KV caches together may take (running and idle, and the running requests' --draft-model caches); 0: no cap. Idle caches go first; a request past its tenant's share (max_kv_bytes, by default half) waits in its tenant's queue")
	f.DurationVar(&o.grace, "grace", 10*time.Second, "on shutdown, how long running requests may finish")
	f.DurationVar(&o.writeTime, "write-timeout", server.DefaultWriteTimeout, "most time one write to a client may block: a client that accepts nothing for that long is dropped and its turn cancelled (generation never waits for a client)")
	f.DurationVar(&o.readTime, "read-timeout", 30*time.Second, "most time to read a request, headers and body (a slower body is cut off)")
	f.DurationVar(&o.idleTime, "idle-timeout", 2*time.Minute, "how long a keep-alive connection may wait for its next request")
	f.BoolVar(&o.logJSON, "log-json", false, "log JSON lines instead of text")
	f.StringVar(&o.pooling, "pooling", "", poolingFlagUsage+" (POST /v1/embeddings)")
	f.StringVar(&o.spec, "spec", "", "speculative decoding's draft source for requests that name none: lookup (n-gram lookup over each request's own prompt and output), draft-model (--draft-model's greedy continuation) or none (default: draft-model with --draft-model, else none); a request's prediction or realizar.speculative overrides it")
	registerDraftModel(cmd, &o.draftModel)
	f.IntVar(&o.draftMax, "draft-max", 0, fmt.Sprintf("longest draft in tokens when a request does not say, at most %d (default: the source's, %d for a prediction, %d for lookup)", draft.MaxDraft, draft.DefaultPredictionDraft, draft.DefaultLookupDraft))
	return cmd
}

func serve(ctx context.Context, o *serveOptions) error {
	if err := o.model.resolve(); err != nil {
		return err
	}
	if o.queue < 1 {
		return usage(fmt.Errorf("--queue %d: must be >= 1", o.queue))
	}
	switch {
	case o.parallel < 1:
		return usage(fmt.Errorf("--parallel %d: must be >= 1", o.parallel))
	case o.batchTok < 1:
		return usage(fmt.Errorf("--batch-tokens %d: must be >= 1", o.batchTok))
	case o.slots < 0:
		return usage(fmt.Errorf("--slots %d: must be >= 0", o.slots))
	case o.kvMiB < 0:
		return usage(fmt.Errorf("--kv-memory %d: must be >= 0", o.kvMiB))
	case o.readTime <= 0:
		return usage(fmt.Errorf("--read-timeout %v: must be > 0", o.readTime))
	case o.writeTime <= 0:
		return usage(fmt.Errorf("--write-timeout %v: must be > 0", o.writeTime))
	case o.idleTime <= 0:
		return usage(fmt.Errorf("--idle-timeout %v: must be > 0", o.idleTime))
	case o.cacheBytes < 0:
		return usage(fmt.Errorf("--module-cache-bytes %d: must be >= 0", o.cacheBytes))
	case o.diskBytes < 0:
		return usage(fmt.Errorf("--compiled-dir-bytes %d: must be >= 0", o.diskBytes))
	case o.spec != "" && o.spec != "lookup" && o.spec != "draft-model" && o.spec != "none":
		return usage(fmt.Errorf("--spec %q: lookup, draft-model or none", o.spec))
	case o.spec == "draft-model" && o.draftModel == "":
		return usage(errors.New("--spec draft-model needs --draft-model FILE"))
	case o.draftMax < 0 || o.draftMax > draft.MaxDraft:
		return usage(fmt.Errorf("--draft-max %d: must be in [0, %d]", o.draftMax, draft.MaxDraft))
	}
	if err := checkPoolingFlag(o.pooling, true); err != nil {
		return err
	}
	storeAt := storeURL(o.store)
	if storeAt != "" && (o.tenants != "" || o.pluginDir != "") {
		return usage(errors.New("--store (or $" + storeEnv + ") keeps tenants and plugins in the database: it excludes --tenants and --plugin-dir"))
	}
	var handler slog.Handler = slog.NewTextHandler(os.Stderr, nil)
	if o.logJSON {
		handler = slog.NewJSONHandler(os.Stderr, nil)
	}
	log := slog.New(handler)
	warnSmallCaches(log, o.cacheBytes, o.diskBytes, o.pluginDir != "")

	var tenants tenancy.TenantSource = tenancy.Anonymous(tenancy.Limits{})
	maxModule := 1 << 20
	switch {
	case storeAt != "":
		// Tenants' limits may change while serving: room for the default
		// module cap, or more when a tenant has more already.
		maxModule = host.DefaultMaxModuleBytes
	case o.tenants != "":
		t, err := tenancy.LoadTenants(o.tenants)
		if err != nil {
			return badFile(err)
		}
		tenants = t
	case !isLoopback(o.addr):
		return usage(fmt.Errorf("without --tenants the server takes no API keys, so it listens on loopback only, and %s is not a loopback address: give --tenants FILE or an --addr like 127.0.0.1:8080", o.addr))
	}
	hostCfg := host.NewConfig().WithModuleCacheBytes(o.cacheBytes)
	var store tenancy.Store = tenancy.NewMemStore()
	if o.pluginDir != "" {
		ds, err := tenancy.NewDirStore(o.pluginDir)
		if err != nil {
			return failure(err)
		}
		store = ds
		hostCfg = hostCfg.WithCompilationCacheDir(filepath.Join(o.pluginDir, ".compiled")).WithCompilationCacheDirBytes(o.diskBytes)
	}
	var h *host.Host
	var ps *pgstore.Store
	if storeAt != "" {
		var err error
		// Plugins deleted through any replica release their compiled code here.
		ps, err = openStore(ctx, storeAt, log, func(tenant, sum string) {
			if h != nil {
				h.Evict(tenant, sum)
			}
		})
		if err != nil {
			return failure(err)
		}
		defer ps.Close()
		tenants, store = ps, ps
		maxModule = max(maxModule, ps.Tenants().MaxPluginBytes())
	} else {
		maxModule = max(maxModule, tenants.Tenants().MaxPluginBytes())
	}
	h, err := host.New(ctx, hostCfg.WithMaxModuleBytes(maxModule))
	if err != nil {
		return failure(err)
	}
	defer h.Close(context.Background())
	if ps != nil {
		follow, stopFollowing := context.WithCancel(context.Background())
		followed := make(chan struct{})
		go func() { _ = ps.Run(follow); close(followed) }()
		defer func() { stopFollowing(); <-followed }()
	}
	var responses tenancy.ResponseStore // stored responses: in memory, or with the tenants in the database
	if ps != nil {
		responses = ps
	}
	srv, err := server.New(server.Config{Tenants: tenants, Store: store, Host: h, Builtins: plugins.Builtin,
		Queue: o.queue, Parallel: o.parallel, BatchTokens: o.batchTok, Slots: o.slots, KVMemory: o.kvMiB << 20, WriteTimeout: o.writeTime, Logger: log,
		Responses: responses, Lookup: o.spec == "lookup", DraftModel: o.draftModel != "" && (o.spec == "" || o.spec == "draft-model"), DraftMax: o.draftMax})
	if err != nil {
		return failure(err)
	}

	if o.metrics != "" {
		mln, err := net.Listen("tcp", o.metrics)
		if err != nil {
			return failure(err)
		}
		ms := newMetricsServer(srv.MetricsHandler())
		go func() { _ = ms.Serve(mln) }()
		defer ms.Close()
		log.Info("metrics listening", "metrics_addr", mln.Addr().String())
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return failure(err)
	}
	baseCtx, cancelTurns := context.WithCancelCause(context.Background())
	defer cancelTurns(nil)
	hs := newHTTPServer(srv, baseCtx, o.readTime, o.idleTime)
	// A request with both Content-Length and Transfer-Encoding is a 400
	// that closes its connection (RFC 9112 §6.1).
	ln = server.GuardListener(hs, ln)
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	log.Info("listening", "addr", ln.Addr().String(), "tenants", len(tenants.Tenants().All()), "plugin_dir", o.pluginDir,
		"store", ps != nil)

	l, err := loadModel(&o.model, os.Stderr)
	if err != nil {
		_ = hs.Close()
		return err
	}
	defer l.Close()
	// The chat template renders in the sandbox, probed once here: one past
	// its limits refuses the file (exit 3) before the first request.
	ct, err := openChatTemplate(ctx, o.model.path, l.tok)
	if err != nil {
		_ = hs.Close()
		return err
	}
	defer ct.Close(context.Background())
	m := &server.Model{ID: modelID(o.model.path), Forward: l.fwd, Tokenizer: l.tok,
		KVBytesPerPosition: l.model.KVBytesPerPosition()}
	if ct.r != nil {
		m.RenderChat = ct.r.Render
	}
	embedder, noEmbeddings, err := embedderFor(l, o.pooling)
	if err != nil {
		return err
	}
	if embedder != nil {
		m.Embedder = embedder
		log.Info("embeddings", "pooling", embedder.Pooling().String(), "dimensions", embedder.Dims())
	} else {
		log.Info("embeddings off", "reason", noEmbeddings)
	}
	// Each further sequence: a step of its own (a KV cache, on the device
	// under --gpu) over the same weights.
	m.NewForward = func() (forward.ArchForward, error) { return l.newSequence(&o.model) }
	if o.draftModel != "" {
		dl, err := loadDraftModel(o.draftModel, &o.model, l.tok, os.Stderr)
		if err != nil {
			_ = hs.Close()
			return err
		}
		defer dl.Close()
		m.Draft = dl.draft
		log.Info("draft model", "file", o.draftModel, "default", o.spec == "" || o.spec == "draft-model")
	}
	if err := srv.SetModel(m); err != nil {
		return failure(err)
	}
	log.Info("ready", "model", m.ID, "context", m.Forward.ContextLength(), "vocab", m.Tokenizer.Size())

	sig, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	select {
	case err := <-served:
		return failure(err)
	case <-sig.Done():
	}
	log.Info("shutting down", "grace", o.grace.String())
	grace, cancel := context.WithTimeout(context.Background(), o.grace)
	defer cancel()
	if err := hs.Shutdown(grace); err != nil {
		log.Warn("grace period over; cancelling running requests", "error", err.Error())
		// Every request still running gets an error: its turn ends at the
		// next pass and its handler writes the error, then the connections
		// close.
		srv.CancelTurns()
		last, cancelLast := context.WithTimeout(context.Background(), o.writeTime)
		if hs.Shutdown(last) != nil {
			cancelTurns(errors.New("server shutting down"))
			_ = hs.Close()
		}
		cancelLast()
	}
	srv.Wait()
	log.Info("stopped")
	return nil
}

// isLoopback reports whether addr (host:port) names a loopback host.
func isLoopback(addr string) bool {
	hostPart, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if hostPart == "localhost" {
		return true
	}
	ip := net.ParseIP(hostPart)
	return ip != nil && ip.IsLoopback()
}

// newHTTPServer is the server's http.Server: headers within 10 s (or
// read, when shorter), the whole request, body included, within read (a
// slow body is cut off: its handler's read fails and the connection
// closes), an idle keep-alive connection closed after idle. Writes have no
// server-wide deadline (a streamed turn may run for minutes): each write
// has its own, --write-timeout. Requests' contexts derive from base.
func newHTTPServer(h http.Handler, base context.Context, read, idle time.Duration) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: min(10*time.Second, read), ReadTimeout: read, IdleTimeout: idle,
		BaseContext: func(net.Listener) context.Context { return base }}
}

// newMetricsServer serves metrics at GET /metrics (anything else is a
// 404), with the API's header deadline; a scrape is short, so it closes
// idle connections after a minute.
func newMetricsServer(metrics http.Handler) *http.Server {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", metrics)
	return &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		IdleTimeout: time.Minute}
}

// compiledPerWasmByte is about how many bytes of compiled code wazero
// writes per byte of a Go guest's wasm (the embedded grammar processor:
// 2.9 MB of wasm, 12.9 MB compiled).
const compiledPerWasmByte = 5

// warnSmallCaches logs a warning when a cache bound cannot hold the
// embedded grammar processor (the largest built-in module): an entry
// larger than its cache's whole bound is not kept, so such a module is
// compiled again for every request that uses it (correct, but seconds
// each).
func warnSmallCaches(log *slog.Logger, moduleBytes, dirBytes int64, dir bool) {
	wasm, err := plugins.Builtin(plugins.GrammarBuiltin)
	if err != nil {
		return
	}
	size := int64(len(wasm))
	if moduleBytes > 0 && moduleBytes < size {
		log.Warn("--module-cache-bytes is smaller than the embedded grammar processor: a module larger than the bound is compiled again for every request that uses it",
			"module_cache_bytes", moduleBytes, "grammar_module_bytes", size)
	}
	if dir && dirBytes > 0 && dirBytes < compiledPerWasmByte*size {
		log.Warn("--compiled-dir-bytes is smaller than the embedded grammar processor's compiled code: a compiled file larger than the bound is not kept on disk",
			"compiled_dir_bytes", dirBytes, "grammar_compiled_bytes_about", compiledPerWasmByte*size)
	}
}
