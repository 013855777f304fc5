package pgstore

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/internal/pgtest"
	"github.com/realizar-host/realizar-host/internal/tenancy"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.StopShared()
	os.Exit(code)
}

// fast are Options for tests: a short resync, quick timeouts.
func fast(onRemoved func(tenant, sum string)) Options {
	log := slog.New(slog.DiscardHandler)
	if testing.Verbose() {
		log = slog.Default()
	}
	return Options{Resync: 300 * time.Millisecond, OpTimeout: 2 * time.Second, OnRemoved: onRemoved, Logger: log}
}

func open(t *testing.T, url string, opts Options) *Store {
	t.Helper()
	s, err := Open(t.Context(), url, opts)
	require.NoError(t, err)
	t.Cleanup(s.Close)
	return s
}

// run starts s.Run until the test ends and waits until it listens.
func run(t *testing.T, s *Store) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = s.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	require.Eventually(t, s.Connected, 5*time.Second, 10*time.Millisecond)
}

// module is a fake module: the store keeps bytes, it does not check them.
func module(s string) ([]byte, string) {
	b := []byte("\x00asm\x01\x00\x00\x00" + s)
	return b, tenancy.HashKey(string(b))
}

func TestMigrations(t *testing.T) {
	url := pgtest.Shared(t).NewDatabase(t)
	// Replicas starting together: each migration is applied once.
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() {
			s, err := Open(t.Context(), url, Options{})
			if err == nil {
				s.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	conn, err := pgx.Connect(t.Context(), url)
	require.NoError(t, err)
	defer conn.Close(t.Context())
	var n, top int
	require.NoError(t, conn.QueryRow(t.Context(), "SELECT count(*), max(version) FROM realizar_schema").Scan(&n, &top))
	assert.Equal(t, schemaVersion(), n)
	assert.Equal(t, schemaVersion(), top)

	// A newer release migrated the database: this one refuses it.
	_, err = conn.Exec(t.Context(), "INSERT INTO realizar_schema (version, name) VALUES ($1, 'future.sql')", schemaVersion()+1)
	require.NoError(t, err)
	_, err = Open(t.Context(), url, Options{})
	assert.ErrorIs(t, err, ErrSchemaTooNew)
}

func TestAdmin(t *testing.T) {
	s := open(t, pgtest.Shared(t).NewDatabase(t), Options{})
	ctx := t.Context()
	k1, k2 := tenancy.HashKey("key-1"), tenancy.HashKey("key-2")
	require.NoError(t, s.AddTenant(ctx, "acme", tenancy.Limits{MaxConcurrent: 3}, k1))
	assert.ErrorIs(t, s.AddTenant(ctx, "acme", tenancy.Limits{}, k2), ErrTenantExists)
	assert.ErrorIs(t, s.AddTenant(ctx, "other", tenancy.Limits{}, k1), ErrKeyExists)
	assert.Error(t, s.AddTenant(ctx, "Bad Name", tenancy.Limits{}, k2))
	assert.Error(t, s.AddTenant(ctx, "neg", tenancy.Limits{MaxConcurrent: -1}, k2))
	assert.Error(t, s.AddTenant(ctx, "short", tenancy.Limits{}, "abcd"))
	assert.ErrorIs(t, s.AddKey(ctx, "nobody", k2), ErrNoTenant)
	require.NoError(t, s.AddKey(ctx, "acme", k2))
	assert.ErrorIs(t, s.RevokeKey(ctx, "acme", tenancy.HashKey("key-3")), ErrNoKey)
	require.NoError(t, s.RevokeKey(ctx, "acme", k1))
	require.NoError(t, s.SetLimits(ctx, "acme", tenancy.Limits{MaxConcurrent: 5}))
	assert.ErrorIs(t, s.SetLimits(ctx, "nobody", tenancy.Limits{}), ErrNoTenant)
	wasm, sum := module("a")
	require.NoError(t, s.Put(ctx, "acme", sum, wasm, tenancy.Quota{}))

	list, err := s.ListTenants(ctx)
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, TenantInfo{Name: "acme", Limits: tenancy.Limits{MaxConcurrent: 5}, KeySHA256: []string{k2},
		Plugins: 1, PluginBytes: int64(len(wasm))}, list[0])

	// Import is all or nothing.
	f := &tenancy.TenantsFile{Defaults: tenancy.Limits{MaxConcurrent: 2}, Tenants: []tenancy.TenantSpec{
		{Name: "b", KeySHA256: []string{tenancy.HashKey("b")}},
		{Name: "acme", KeySHA256: []string{tenancy.HashKey("c")}}}}
	_, err = s.Import(ctx, f)
	assert.ErrorIs(t, err, ErrTenantExists)
	f.Tenants[1].Name = "c"
	n, err := s.Import(ctx, f)
	require.NoError(t, err)
	assert.Equal(t, 2, n)

	require.NoError(t, s.RemoveTenant(ctx, "acme"))
	assert.ErrorIs(t, s.RemoveTenant(ctx, "acme"), ErrNoTenant)
	list, err = s.ListTenants(ctx)
	require.NoError(t, err)
	require.Len(t, list, 2)
	assert.Equal(t, tenancy.Limits{MaxConcurrent: 2}, list[0].Limits,
		"the file's defaults are stored in each tenant's limits, the built-in defaults are not")
	_, err = s.Get(ctx, "acme", sum)
	assert.ErrorIs(t, err, tenancy.ErrNoPlugin, "a removed tenant's plugins go with it")
}

// TestReplicas: a change through one Store is seen by another within a
// second (notifications), and plugin removals are reported once no
// tenant holds the module.
func TestReplicas(t *testing.T) {
	url := pgtest.Shared(t).NewDatabase(t)
	var mu sync.Mutex
	var removed []string
	a := open(t, url, fast(nil))
	b := open(t, url, fast(func(tenant, sum string) { mu.Lock(); removed = append(removed, tenant+" "+sum); mu.Unlock() }))
	run(t, b)
	ctx := t.Context()

	require.NoError(t, a.AddTenant(ctx, "x", tenancy.Limits{}, tenancy.HashKey("kx")))
	require.NoError(t, a.AddTenant(ctx, "y", tenancy.Limits{}, tenancy.HashKey("ky")))
	start := time.Now()
	require.Eventually(t, func() bool {
		_, err := b.Tenants().Authenticate("Bearer kx")
		return err == nil
	}, time.Second, 5*time.Millisecond)
	t.Logf("tenant seen after %v", time.Since(start))

	wasm, sum := module("shared")
	require.NoError(t, a.Put(ctx, "x", sum, wasm, tenancy.Quota{}))
	require.NoError(t, a.Put(ctx, "y", sum, wasm, tenancy.Quota{}))
	start = time.Now()
	require.Eventually(t, func() bool {
		l, _ := b.List(ctx, "x")
		return len(l) == 1
	}, time.Second, 5*time.Millisecond)
	t.Logf("upload listed after %v", time.Since(start))
	got, err := b.Get(ctx, "x", sum)
	require.NoError(t, err)
	assert.Equal(t, wasm, got)

	// Gone from x, still held by y: removed for x (its compiled code),
	// the bytes kept; then gone from y too, and the bytes with it.
	// List reads the database, Get b's index, which the notification
	// updates a moment later: both within the second.
	require.NoError(t, a.Delete(ctx, "x", sum))
	require.Eventually(t, func() bool { l, _ := b.List(ctx, "x"); return len(l) == 0 }, time.Second, 5*time.Millisecond)
	require.Eventually(t, func() bool { _, err := b.Get(ctx, "x", sum); return errors.Is(err, tenancy.ErrNoPlugin) }, time.Second, 5*time.Millisecond)
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(removed) == 1 }, time.Second, 5*time.Millisecond)
	mods, _ := b.cached()
	assert.Equal(t, 1, mods, "y holds it still")
	require.NoError(t, a.Delete(ctx, "y", sum))
	assert.ErrorIs(t, a.Delete(ctx, "y", sum), tenancy.ErrNoPlugin)
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(removed) == 2 }, time.Second, 5*time.Millisecond)
	mu.Lock()
	assert.Equal(t, []string{"x " + sum, "y " + sum}, removed)
	mu.Unlock()
	mods, _ = b.cached()
	assert.Zero(t, mods)

	// A change made in SQL, by hand, is seen as well (the triggers).
	conn, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "DELETE FROM realizar_keys WHERE tenant = 'x'")
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		_, err := b.Tenants().Authenticate("Bearer kx")
		return err != nil
	}, time.Second, 5*time.Millisecond)

	// Each replica enforces its share of a tenant's rate: a second one
	// listening halves it (rounded up), once counted.
	run(t, a)
	require.Eventually(t, func() bool { return b.Replicas() == 2 }, 2*time.Second, 10*time.Millisecond)
	require.Eventually(t, func() bool {
		y, err := b.Tenants().Authenticate("Bearer ky")
		return err == nil && y.Limits.RequestsPerMinute == (tenancy.DefaultLimits().RequestsPerMinute+1)/2
	}, 2*time.Second, 10*time.Millisecond)

	// The quota holds across replicas: both see the database's count.
	q := tenancy.Quota{Plugins: 1}
	w1, s1 := module("q1")
	w2, s2 := module("q2")
	require.NoError(t, a.Put(ctx, "y", s1, w1, q))
	assert.ErrorIs(t, b.Put(ctx, "y", s2, w2, q), tenancy.ErrQuota)
}

// TestDatabaseLoss: with PostgreSQL stopped, what needs it wraps
// tenancy.ErrUnavailable, what is cached is served; once it is back the
// Store reconnects and nothing is lost.
func TestDatabaseLoss(t *testing.T) {
	pg := pgtest.Shared(t)
	url := pg.NewDatabase(t)
	s := open(t, url, fast(nil))
	run(t, s)
	ctx := t.Context()
	require.NoError(t, s.AddTenant(ctx, "x", tenancy.Limits{}, tenancy.HashKey("kx")))
	cached, cachedSum := module("cached")
	require.NoError(t, s.Put(ctx, "x", cachedSum, cached, tenancy.Quota{}))
	other, otherSum := module("other")
	require.NoError(t, s.Put(ctx, "x", otherSum, other, tenancy.Quota{}))
	s.mu.Lock()
	s.blobs.Remove(otherSum) // known, not cached
	s.mu.Unlock()
	require.Eventually(t, func() bool { _, err := s.Tenants().Authenticate("Bearer kx"); return err == nil },
		time.Second, 5*time.Millisecond)

	require.NoError(t, pg.Stop())
	restarted := false
	defer func() {
		if !restarted {
			_ = pg.StartAgain()
		}
	}()
	require.Eventually(t, func() bool { return !s.Connected() }, 5*time.Second, 10*time.Millisecond)

	_, err := s.Tenants().Authenticate("Bearer kx")
	assert.NoError(t, err, "tenants are served from memory")
	got, err := s.Get(ctx, "x", cachedSum)
	require.NoError(t, err, "a cached module is served")
	assert.Equal(t, cached, got)
	l, err := s.List(ctx, "x")
	require.NoError(t, err)
	assert.Len(t, l, 2)
	w, sum := module("new")
	for name, err := range map[string]error{
		"get uncached": func() error { _, err := s.Get(ctx, "x", otherSum); return err }(),
		"put":          s.Put(ctx, "x", sum, w, tenancy.Quota{}),
		"delete":       s.Delete(ctx, "x", cachedSum),
		"admin":        s.AddKey(ctx, "x", tenancy.HashKey("k2")),
	} {
		assert.ErrorIs(t, err, tenancy.ErrUnavailable, name)
	}

	require.NoError(t, pg.StartAgain())
	restarted = true
	require.Eventually(t, s.Connected, 10*time.Second, 10*time.Millisecond)
	require.Eventually(t, func() bool { return s.Put(ctx, "x", sum, w, tenancy.Quota{}) == nil }, 5*time.Second, 20*time.Millisecond)
	got, err = s.Get(ctx, "x", otherSum)
	require.NoError(t, err)
	assert.Equal(t, other, got)
	l, err = s.List(ctx, "x")
	require.NoError(t, err)
	assert.Len(t, l, 3)
	if err := s.Delete(ctx, "x", cachedSum); err != nil {
		t.Fatal(errors.Join(errors.New("delete after recovery"), err))
	}
}
