package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/realizar-host/realizar-host/internal/lru"
	"github.com/realizar-host/realizar-host/internal/tenancy"
)

// channel is the LISTEN/NOTIFY channel the triggers notify.
const channel = "realizar_changes"

// listenerApp is the application_name of each replica's listening
// connection: counting them in pg_stat_activity counts the live replicas.
const listenerApp = "realizar-host listener"

// Options tune a Store. Zero fields take the defaults.
type Options struct {
	// Logger receives reconnections and resync failures; nil: slog.Default().
	Logger *slog.Logger
	// Resync is how often Run reloads everything whatever it was notified
	// of; default 10 s.
	Resync time.Duration
	// OpTimeout bounds each database call on the request path, so that a
	// database that hangs is a 503 rather than a stuck request; default 5 s.
	OpTimeout time.Duration
	// ModuleCacheBytes bounds the module bytes kept in memory (LRU);
	// default 64 MiB.
	ModuleCacheBytes int64
	// OnRemoved, when set, is called with a tenant and a plugin's sha256
	// once that tenant no longer holds it, whether it was deleted through
	// this Store or another replica: the place to release the tenant's
	// compiled code of it (host.Host.Evict in the tenant's namespace).
	OnRemoved func(tenant, sum string)
}

func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Resync <= 0 {
		o.Resync = 10 * time.Second
	}
	if o.OpTimeout <= 0 {
		o.OpTimeout = 5 * time.Second
	}
	if o.ModuleCacheBytes <= 0 {
		o.ModuleCacheBytes = 64 << 20
	}
	return o
}

// Store is tenants, plugins and stored responses in PostgreSQL: a
// tenancy.TenantSource, a tenancy.Store and a tenancy.ResponseStore, plus
// the tenant administration the CLI uses. Safe for concurrent use.
type Store struct {
	pool *pgxpool.Pool
	opts Options
	log  *slog.Logger

	tenants atomic.Pointer[tenancy.Tenants]

	mu    sync.Mutex
	index map[string]map[string]tenancy.PluginInfo // tenant, sha256
	blobs *lru.Cache[string, []byte]               // by sha256: the bytes are the same in every namespace
	// served are the plugins Get returned, so that one fetched before
	// the index knew of it is still reported to OnRemoved once gone.
	served map[removal]struct{}

	connected atomic.Bool // the listener holds a connection
	lost      atomic.Bool // the listener lost its connection (or never made one) and has not listened again
	syncs     atomic.Int64
	replicas  atomic.Int64 // live replicas, as last counted
}

// Open connects to url (a postgres:// URL or DSN), applies pending
// migrations under an advisory lock and loads the tenants and the plugin
// index. It fails when the database cannot be reached, and with
// ErrSchemaTooNew for a newer schema. Call Run to follow changes, Close
// when done.
func Open(ctx context.Context, url string, opts Options) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("pgstore: %w", err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("pgstore: %w", err)
	}
	opts = opts.withDefaults()
	s := &Store{pool: pool, opts: opts, log: opts.Logger, index: map[string]map[string]tenancy.PluginInfo{},
		blobs: lru.New[string, []byte](opts.ModuleCacheBytes, nil), served: map[removal]struct{}{}}
	s.tenants.Store(&tenancy.Tenants{})
	if _, err := migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, err
	}
	if err := s.resync(ctx, true, true); err != nil {
		pool.Close()
		return nil, err
	}
	return s, nil
}

// Close closes the pool. Run's context should be cancelled first.
func (s *Store) Close() { s.pool.Close() }

// unavailable wraps err in tenancy.ErrUnavailable unless it is the
// database's answer to the statement (a *pgconn.PgError other than a
// connection or shutdown class): a refused connection, a broken one, a
// timeout. A connection the server refused with an error of its own (a
// database not accepting connections, too many clients) is one refused.
func unavailable(err error) error {
	if err == nil {
		return nil
	}
	var pe *pgconn.PgError
	var ce *pgconn.ConnectError
	if !errors.As(err, &ce) && errors.As(err, &pe) && !strings.HasPrefix(pe.Code, "08") && !strings.HasPrefix(pe.Code, "57P") {
		return err
	}
	if errors.Is(err, tenancy.ErrUnavailable) {
		return err
	}
	return fmt.Errorf("%w: %w", tenancy.ErrUnavailable, err)
}

// op is ctx bounded by OpTimeout.
func (s *Store) op(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.opts.OpTimeout)
}

// Tenants implements tenancy.TenantSource: the tenants as last loaded.
func (s *Store) Tenants() *tenancy.Tenants { return s.tenants.Load() }

// Connected reports whether the listener holds a connection to the
// database (false before Run and while it reconnects).
func (s *Store) Connected() bool { return s.connected.Load() }

// Syncs is how many reloads have completed: tests wait on it.
func (s *Store) Syncs() int64 { return s.syncs.Load() }

// resync reloads the tenants and/or the plugin index.
func (s *Store) resync(ctx context.Context, tenants, plugins bool) error {
	ctx, cancel := s.op(ctx)
	defer cancel()
	if tenants {
		if err := s.loadTenants(ctx); err != nil {
			return err
		}
	}
	if plugins {
		if err := s.loadIndex(ctx); err != nil {
			return err
		}
	}
	s.syncs.Add(1)
	return nil
}

// Replicas is the number of live replicas as last counted (at least 1):
// the listening connections to this database, counted at each reload of
// the tenants (so within Options.Resync of a replica starting or dying).
func (s *Store) Replicas() int { return int(max(1, s.replicas.Load())) }

// loadTenants reloads the tenants. Each replica enforces its share of a
// tenant's rate: requests_per_minute divided by the live replicas, rounded
// up (RATIONALE.md, "Rate limits across replicas"); the other limits are
// per replica as written.
func (s *Store) loadTenants(ctx context.Context) error {
	var n int64
	if err := s.pool.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()",
		listenerApp).Scan(&n); err != nil {
		return unavailable(err)
	}
	s.replicas.Store(max(1, n))
	replicas := s.Replicas()
	specs := map[string]*tenancy.TenantSpec{}
	var order []string
	rows, err := s.pool.Query(ctx, "SELECT name, limits FROM realizar_tenants ORDER BY name")
	if err != nil {
		return unavailable(err)
	}
	for rows.Next() {
		var name string
		var raw []byte
		if err := rows.Scan(&name, &raw); err != nil {
			rows.Close()
			return unavailable(err)
		}
		var l tenancy.Limits
		if err := json.Unmarshal(raw, &l); err != nil {
			s.log.Warn("tenant limits unreadable; defaults apply", "tenant", name, "error", err.Error())
		}
		specs[name] = &tenancy.TenantSpec{Name: name, Limits: l}
		order = append(order, name)
	}
	if err := rows.Err(); err != nil {
		return unavailable(err)
	}
	rows, err = s.pool.Query(ctx, "SELECT tenant, key_sha256 FROM realizar_keys")
	if err != nil {
		return unavailable(err)
	}
	for rows.Next() {
		var tenant, key string
		if err := rows.Scan(&tenant, &key); err != nil {
			rows.Close()
			return unavailable(err)
		}
		if sp := specs[tenant]; sp != nil {
			sp.KeySHA256 = append(sp.KeySHA256, key)
		}
	}
	if err := rows.Err(); err != nil {
		return unavailable(err)
	}
	list := make([]tenancy.TenantSpec, 0, len(order))
	for _, name := range order {
		sp := *specs[name]
		sp.Limits = sp.Limits.Or(tenancy.DefaultLimits())
		sp.Limits.RequestsPerMinute = (sp.Limits.RequestsPerMinute + replicas - 1) / replicas
		list = append(list, sp)
	}
	ts, err := tenancy.NewTenants(list, s.tenants.Load())
	if err != nil {
		return err
	}
	s.tenants.Store(ts)
	return nil
}

func (s *Store) loadIndex(ctx context.Context) error {
	rows, err := s.pool.Query(ctx, "SELECT tenant, sha256, bytes, meta FROM realizar_plugins")
	if err != nil {
		return unavailable(err)
	}
	index := map[string]map[string]tenancy.PluginInfo{}
	for rows.Next() {
		var tenant, sum string
		var n int
		var raw []byte
		if err := rows.Scan(&tenant, &sum, &n, &raw); err != nil {
			rows.Close()
			return unavailable(err)
		}
		info := tenancy.PluginInfo{SHA256: sum, Bytes: n}
		_ = json.Unmarshal(raw, &info.Meta)
		if index[tenant] == nil {
			index[tenant] = map[string]tenancy.PluginInfo{}
		}
		index[tenant][sum] = info
	}
	if err := rows.Err(); err != nil {
		return unavailable(err)
	}
	s.mu.Lock()
	old := s.index
	s.index = index
	gone := s.goneLocked(old)
	s.mu.Unlock()
	s.removed(gone)
	return nil
}

// removal is a plugin a tenant no longer holds.
type removal struct{ tenant, sum string }

// goneLocked is what each tenant of old, or of the plugins Get served,
// no longer holds in the current index; the cached module bytes that no
// tenant holds leave the cache.
func (s *Store) goneLocked(old map[string]map[string]tenancy.PluginInfo) []removal {
	var gone []removal
	for tenant, sums := range old {
		for sum := range sums {
			if _, ok := s.index[tenant][sum]; !ok {
				gone = append(gone, removal{tenant, sum})
				delete(s.served, removal{tenant, sum})
			}
		}
	}
	for r := range s.served {
		if _, ok := s.index[r.tenant][r.sum]; !ok {
			gone = append(gone, r)
			delete(s.served, r)
		}
	}
	// Including a module fetched by Get before this replica's index knew of it.
	for _, sum := range s.blobs.Keys() {
		if !s.heldLocked(sum) {
			s.blobs.Remove(sum)
		}
	}
	return gone
}

// heldLocked reports whether any tenant of the index holds sum.
func (s *Store) heldLocked(sum string) bool {
	for _, sums := range s.index {
		if _, ok := sums[sum]; ok {
			return true
		}
	}
	return false
}

func (s *Store) removed(gone []removal) {
	if s.opts.OnRemoved == nil {
		return
	}
	for _, r := range gone {
		s.opts.OnRemoved(r.tenant, r.sum)
	}
}

// Backoff between the listener's connection attempts: it starts at
// minBackoff, doubles after each failure up to maxBackoff, and starts
// again from minBackoff once a connection has listened for maxBackoff
// (so a database that accepts and drops at once is retried every
// maxBackoff at most). Each wait is drawn uniformly from [b/2, b].
const (
	minBackoff = 100 * time.Millisecond
	maxBackoff = 2 * time.Second
)

// minReload is the least time between two reloads driven by
// notifications: a stream of them costs at most one reload per minReload.
const minReload = 100 * time.Millisecond

// jitter is a wait drawn uniformly from [d/2, d].
func jitter(d time.Duration) time.Duration {
	return d/2 + rand.N(d/2+1)
}

// Run follows changes until ctx is done: it LISTENs on a connection of
// its own, reloads the tenants or the plugin index when notified (at
// most once per 100 ms), and everything every Options.Resync. When the
// connection fails, whatever the error, Connected turns false and Run
// reconnects, backing off from 100 ms to 2 s with jitter, LISTENs again
// and reloads everything once listening, so nothing changed meanwhile is
// missed. It logs the first error of an outage as a warning (the same
// error again at debug level) and the recovery. It returns ctx's error.
func (s *Store) Run(ctx context.Context) error {
	backoff := minBackoff
	var down time.Time // when the outage began; zero while none
	var last string    // the last error logged as a warning
	for ctx.Err() == nil {
		held, err := s.listen(ctx, down)
		s.connected.Store(false)
		if ctx.Err() != nil {
			break
		}
		s.lost.Store(true)
		if held >= maxBackoff {
			backoff = minBackoff
		}
		if held > 0 || down.IsZero() {
			down, last = time.Now(), ""
		}
		wait := jitter(backoff)
		if msg := err.Error(); msg != last {
			s.log.Warn("store: lost the database; serving what is cached", "error", msg, "retry_in", wait.String())
			last = msg
		} else {
			s.log.Debug("store: still no database", "error", msg, "retry_in", wait.String(),
				"down_for", time.Since(down).Round(time.Millisecond).String())
		}
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
		backoff = min(2*backoff, maxBackoff)
	}
	return ctx.Err()
}

// listen holds one listening connection until it fails or ctx is done,
// and returns how long it listened (zero when it never did: the connect,
// the LISTEN or the first reload failed) with the error that ended it
// (never nil unless ctx is done). down is when the outage it ends began
// (zero: none), for the log.
func (s *Store) listen(ctx context.Context, down time.Time) (time.Duration, error) {
	connectCtx, cancel := s.op(ctx)
	cfg := s.pool.Config().ConnConfig.Copy()
	cfg.RuntimeParams["application_name"] = listenerApp
	conn, err := pgx.ConnectConfig(connectCtx, cfg)
	cancel()
	if err != nil {
		return 0, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+channel); err != nil {
		return 0, err
	}
	// Listening before reloading: a change after the reload is notified.
	if err := s.resync(ctx, true, true); err != nil {
		return 0, err
	}
	began := time.Now()
	held := func() time.Duration { return time.Since(began) }
	s.lost.Store(false)
	if !s.connected.Swap(true) {
		if down.IsZero() {
			s.log.Info("store: listening for changes")
		} else {
			s.log.Info("store: listening for changes again", "down_for", time.Since(down).Round(time.Millisecond).String())
		}
	}
	next := time.Now().Add(s.opts.Resync)
	reloaded := time.Now()
	for {
		n, err := waitNotification(ctx, conn, next)
		if err != nil {
			return held(), err
		}
		if n == nil {
			// No notification before the periodic resync.
			if err := s.resync(ctx, true, true); err != nil {
				return held(), err
			}
			if _, err := s.sweepResponses(ctx); err != nil {
				s.log.Warn("store: deleting expired responses failed", "error", err.Error())
			}
			next, reloaded = time.Now().Add(s.opts.Resync), time.Now()
			continue
		}
		tenants, plugins := false, false
		mark := func(table string) {
			switch table {
			case "realizar_plugins":
				plugins = true
			default:
				tenants = true
			}
		}
		mark(n.Payload)
		// Gather what arrives with it, until 5 ms pass without one (for
		// 50 ms at most), and until minReload after the last reload:
		// one reload for a burst.
		earliest := reloaded.Add(minReload)
		latest := later(time.Now().Add(50*time.Millisecond), earliest)
		for now := time.Now(); now.Before(latest); now = time.Now() {
			until := later(now.Add(5*time.Millisecond), earliest)
			if until.After(latest) {
				until = latest
			}
			n, err := waitNotification(ctx, conn, until)
			if err != nil {
				return held(), err
			}
			if n == nil && !time.Now().Before(earliest) {
				break
			}
			if n != nil {
				mark(n.Payload)
			}
		}
		if err := s.resync(ctx, tenants, plugins); err != nil {
			return held(), err
		}
		reloaded = time.Now()
	}
}

// later is the later of a and b.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// waitNotification waits on conn for a notification until deadline. It
// returns nil and no error when the deadline passes first, and the
// error otherwise: the connection's (closed, terminated, broken) or,
// when ctx is done, one wrapping ctx's error.
func waitNotification(ctx context.Context, conn *pgx.Conn, deadline time.Time) (*pgconn.Notification, error) {
	wait, cancel := context.WithDeadline(ctx, deadline)
	defer cancel() // after the checks below: a cancelled wait reads as timed out
	n, err := conn.WaitForNotification(wait)
	if err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		return nil, nil
	}
	return n, err
}

// Put implements tenancy.Store. The quota check and the insert are one
// transaction holding the tenant's row, so replicas uploading together
// cannot pass the quota between them. The module's metadata section is
// stored with it, for listings.
func (s *Store) Put(ctx context.Context, tenant, sum string, wasm []byte, q tenancy.Quota) error {
	meta, _ := tenancy.ModuleMeta(wasm)
	rawMeta, err := json.Marshal(meta)
	if err != nil {
		return err
	}
	ctx, cancel := s.op(ctx)
	defer cancel()
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var one int
		if err := tx.QueryRow(ctx, "SELECT 1 FROM realizar_tenants WHERE name = $1 FOR UPDATE", tenant).Scan(&one); err != nil {
			if errors.Is(err, pgx.ErrNoRows) {
				return fmt.Errorf("%w: tenant %s was removed", ErrNoTenant, tenant)
			}
			return err
		}
		var held bool
		if err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM realizar_plugins WHERE tenant = $1 AND sha256 = $2)",
			tenant, sum).Scan(&held); err != nil {
			return err
		}
		if held {
			return nil
		}
		rows, err := tx.Query(ctx, "SELECT sha256, bytes FROM realizar_plugins WHERE tenant = $1", tenant)
		if err != nil {
			return err
		}
		var list []tenancy.PluginInfo
		for rows.Next() {
			var p tenancy.PluginInfo
			if err := rows.Scan(&p.SHA256, &p.Bytes); err != nil {
				rows.Close()
				return err
			}
			list = append(list, p)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if err := tenancy.CheckQuota(list, len(wasm), q); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, "INSERT INTO realizar_plugins (tenant, sha256, wasm, bytes, meta) VALUES ($1, $2, $3, $4, $5)",
			tenant, sum, wasm, len(wasm), rawMeta)
		return err
	})
	if err != nil {
		if errors.Is(err, tenancy.ErrQuota) || errors.Is(err, ErrNoTenant) {
			return err
		}
		return unavailable(err)
	}
	s.mu.Lock()
	if s.index[tenant] == nil {
		s.index[tenant] = map[string]tenancy.PluginInfo{}
	}
	s.index[tenant][sum] = tenancy.PluginInfo{SHA256: sum, Bytes: len(wasm), Meta: meta}
	s.blobs.Add(sum, slices.Clone(wasm), int64(len(wasm)))
	s.mu.Unlock()
	return nil
}

// Get implements tenancy.Store: from the cache when this replica knows the
// tenant holds the module and has its bytes, else from the database. The
// returned slice is shared: do not modify it.
func (s *Store) Get(ctx context.Context, tenant, sum string) ([]byte, error) {
	s.mu.Lock()
	_, known := s.index[tenant][sum]
	if known {
		if b, ok := s.blobs.Get(sum); ok {
			s.served[removal{tenant, sum}] = struct{}{}
			s.mu.Unlock()
			return b, nil
		}
	}
	s.mu.Unlock()
	ctx, cancel := s.op(ctx)
	defer cancel()
	var b []byte
	err := s.pool.QueryRow(ctx, "SELECT wasm FROM realizar_plugins WHERE tenant = $1 AND sha256 = $2", tenant, sum).Scan(&b)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("%w: %s", tenancy.ErrNoPlugin, sum)
	}
	if err != nil {
		return nil, unavailable(err)
	}
	s.mu.Lock()
	s.blobs.Add(sum, b, int64(len(b)))
	s.served[removal{tenant, sum}] = struct{}{}
	s.mu.Unlock()
	return b, nil
}

// List implements tenancy.Store: from the database, metadata included
// (no module bytes are read); while it is unreachable, from this
// replica's index.
func (s *Store) List(ctx context.Context, tenant string) ([]tenancy.PluginInfo, error) {
	opCtx, cancel := s.op(ctx)
	defer cancel()
	rows, err := s.pool.Query(opCtx, "SELECT sha256, bytes, meta FROM realizar_plugins WHERE tenant = $1 ORDER BY sha256", tenant)
	if err == nil {
		var out []tenancy.PluginInfo
		for rows.Next() {
			var p tenancy.PluginInfo
			var raw []byte
			if err = rows.Scan(&p.SHA256, &p.Bytes, &raw); err != nil {
				break
			}
			_ = json.Unmarshal(raw, &p.Meta)
			out = append(out, p)
		}
		rows.Close()
		if err == nil {
			err = rows.Err()
		}
		if err == nil {
			return out, nil
		}
	}
	if err = unavailable(err); !errors.Is(err, tenancy.ErrUnavailable) {
		return nil, err
	}
	s.mu.Lock()
	out := make([]tenancy.PluginInfo, 0, len(s.index[tenant]))
	for _, p := range s.index[tenant] {
		out = append(out, p)
	}
	s.mu.Unlock()
	slices.SortFunc(out, func(a, b tenancy.PluginInfo) int { return strings.Compare(a.SHA256, b.SHA256) })
	return out, nil
}

// Delete implements tenancy.Store.
func (s *Store) Delete(ctx context.Context, tenant, sum string) error {
	ctx, cancel := s.op(ctx)
	defer cancel()
	tag, err := s.pool.Exec(ctx, "DELETE FROM realizar_plugins WHERE tenant = $1 AND sha256 = $2", tenant, sum)
	if err != nil {
		return unavailable(err)
	}
	s.mu.Lock()
	if sums := s.index[tenant]; sums != nil {
		delete(sums, sum)
	}
	delete(s.served, removal{tenant, sum})
	if !s.heldLocked(sum) {
		s.blobs.Remove(sum)
	}
	s.mu.Unlock()
	// Reported even when another replica deleted it first: this index
	// no longer has it to report at the next reload.
	s.removed([]removal{{tenant, sum}})
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%w: %s", tenancy.ErrNoPlugin, sum)
	}
	return nil
}

// Cached is the number of modules whose bytes are in memory and their
// total size in bytes.
func (s *Store) cached() (modules int, bytes int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.blobs.Len(), s.blobs.Bytes()
}
