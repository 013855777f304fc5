package pgstore

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/internal/pgtest"
	"github.com/realizar-host/realizar-host/internal/tenancy"
)

// admin connects to pg's postgres database, to watch and disturb the
// database of url from outside it, and returns that database's name.
func admin(t *testing.T, pg *pgtest.Instance, url string) (*pgx.Conn, string) {
	t.Helper()
	cfg, err := pgx.ParseConfig(url)
	require.NoError(t, err)
	conn, err := pgx.Connect(t.Context(), pg.URL("postgres"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn, cfg.Database
}

// listeners are the backend pids of the listening connections to db.
func listeners(t *testing.T, conn *pgx.Conn, db string) []int {
	t.Helper()
	rows, err := conn.Query(t.Context(), "SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND datname = $2",
		listenerApp, db)
	require.NoError(t, err)
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int])
	require.NoError(t, err)
	return pids
}

// terminate ends the one listening connection to db, waiting up to a
// second for its backend to exit, and returns its pid.
func terminate(t *testing.T, conn *pgx.Conn, db string) int {
	t.Helper()
	pids := listeners(t, conn, db)
	require.Len(t, pids, 1, "one listener")
	var ok bool
	require.NoError(t, conn.QueryRow(t.Context(), "SELECT pg_terminate_backend($1, 1000)", pids[0]).Scan(&ok))
	require.True(t, ok, "listener backend %d terminated", pids[0])
	return pids[0]
}

// xacts is the transactions committed and rolled back in db so far, as
// the statistics know them (each backend reports its own within about a
// second while busy, at exit, or after 10 s idle).
func xacts(t *testing.T, conn *pgx.Conn, db string) int64 {
	t.Helper()
	var n int64
	require.NoError(t, conn.QueryRow(t.Context(),
		"SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = $1", db).Scan(&n))
	return n
}

// TestListenerReconnects: the listening connection, terminated by the
// server (pg_terminate_backend), is replaced within 2 s, three times
// running, and a change is then seen through a notification: the
// replica's periodic resync is an hour, so only LISTEN can tell it.
func TestListenerReconnects(t *testing.T) {
	pg := pgtest.Shared(t)
	url := pg.NewDatabase(t)
	a := open(t, url, fast(nil))
	opts := fast(nil)
	opts.Resync = time.Hour
	b := open(t, url, opts)
	run(t, b)
	conn, db := admin(t, pg, url)
	ctx := t.Context()

	for i := range 3 {
		old := terminate(t, conn, db)
		start := time.Now()
		require.Eventually(t, func() bool {
			pids := listeners(t, conn, db)
			return b.Connected() && len(pids) == 1 && pids[0] != old
		}, 2*time.Second, 5*time.Millisecond, "kill %d: listening again", i)
		t.Logf("kill %d: listening again after %v", i, time.Since(start))

		key := fmt.Sprintf("k%d", i)
		require.NoError(t, a.AddTenant(ctx, fmt.Sprintf("t%d", i), tenancy.Limits{}, tenancy.HashKey(key)))
		require.Eventually(t, func() bool {
			_, err := b.Tenants().Authenticate("Bearer " + key)
			return err == nil
		}, time.Second, 5*time.Millisecond, "kill %d: a change notified after it", i)
	}
}

// TestListenerOutage: while the listener cannot connect (the database
// refuses connections, its listening backend terminated), Connected is
// false and the replica costs the database no more than when idle:
// at most twice the transactions of an idle window of the same length
// (a resync each 300 ms, four statements each), plus 30 for what the
// statistics report late (up to about a second of the idle load) and
// for the connection attempts. Once connections are allowed again it
// listens again within 3 s (the 2 s backoff cap and the connection).
func TestListenerOutage(t *testing.T) {
	const window = 2 * time.Second
	const allowance = 30
	pg := pgtest.Shared(t)
	url := pg.NewDatabase(t)
	s := open(t, url, fast(nil))
	run(t, s)
	conn, db := admin(t, pg, url)
	ctx := t.Context()

	x0 := xacts(t, conn, db)
	time.Sleep(window)
	idle := xacts(t, conn, db) - x0

	_, err := conn.Exec(ctx, "ALTER DATABASE "+db+" ALLOW_CONNECTIONS false")
	require.NoError(t, err)
	allowed := false
	allow := func() {
		if !allowed {
			_, err := conn.Exec(context.Background(), "ALTER DATABASE "+db+" ALLOW_CONNECTIONS true")
			require.NoError(t, err)
			allowed = true
		}
	}
	defer allow()
	old := terminate(t, conn, db)
	x0 = xacts(t, conn, db)
	time.Sleep(window)
	outage := xacts(t, conn, db) - x0
	t.Logf("transactions in %v: %d idle, %d without the listener", window, idle, outage)
	assert.False(t, s.Connected(), "not connected during the outage")
	assert.LessOrEqual(t, outage, 2*idle+allowance, "transactions during the outage")

	allow()
	start := time.Now()
	require.Eventually(t, func() bool {
		pids := listeners(t, conn, db)
		return s.Connected() && len(pids) == 1 && !slices.Contains(pids, old)
	}, 3*time.Second, 10*time.Millisecond, "listening again")
	t.Logf("listening again %v after connections were allowed", time.Since(start))
}

// TestReloadRate: a stream of notifications, sent as fast as one
// connection can for a second, costs at most one reload per minReload
// (100 ms), plus two for the edges of the window; at least one happens.
func TestReloadRate(t *testing.T) {
	const window = time.Second
	pg := pgtest.Shared(t)
	url := pg.NewDatabase(t)
	opts := fast(nil)
	opts.Resync = time.Hour
	s := open(t, url, opts)
	run(t, s)
	conn, err := pgx.Connect(t.Context(), url)
	require.NoError(t, err)
	defer conn.Close(context.Background())

	before := s.Syncs()
	sent := 0
	for end := time.Now().Add(window); time.Now().Before(end); sent++ {
		_, err := conn.Exec(t.Context(), "SELECT pg_notify($1, 'realizar_tenants')", channel)
		require.NoError(t, err)
	}
	reloads := s.Syncs() - before
	t.Logf("%d notifications in %v: %d reloads", sent, window, reloads)
	assert.Positive(t, reloads)
	assert.LessOrEqual(t, reloads, int64(window/minReload)+2)
}
