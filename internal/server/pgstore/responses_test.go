package pgstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/internal/pgtest"
	"github.com/realizar-host/realizar-host/internal/tenancy"
)

// resp is a stored response of id whose Response mentions text.
func resp(id, text string) tenancy.StoredResponse {
	return tenancy.StoredResponse{ID: id, Response: []byte(`{"id":"` + id + `","text":"` + text + `"}`),
		Conversation: []byte(`[{"type":"message","role":"user","text":"` + text + `"}]`)}
}

// responseTenants adds tenants acme and beta through s.
func responseTenants(t *testing.T, s *Store) {
	t.Helper()
	for _, name := range []string{"acme", "beta"} {
		require.NoError(t, s.AddTenant(t.Context(), name, tenancy.Limits{}, tenancy.HashKey("key-"+name)))
	}
}

// rowsOf is how many responses tenant has in the table, expired or not.
func rowsOf(t *testing.T, conn *pgx.Conn, tenant string) int {
	t.Helper()
	var n int
	require.NoError(t, conn.QueryRow(t.Context(), "SELECT count(*) FROM realizar_responses WHERE tenant = $1", tenant).Scan(&n))
	return n
}

// age makes tenant's response id older than tenancy.ResponseTTL.
func age(t *testing.T, conn *pgx.Conn, tenant, id string) {
	t.Helper()
	tag, err := conn.Exec(t.Context(), "UPDATE realizar_responses SET created_at = now() - make_interval(secs => $3 + 1) WHERE tenant = $1 AND id = $2",
		tenant, id, tenancy.ResponseTTL.Seconds())
	require.NoError(t, err)
	require.EqualValues(t, 1, tag.RowsAffected())
}

// TestResponsesAcrossReplicas: a response stored through A is read and
// deleted through B, and never reached by another tenant through either.
func TestResponsesAcrossReplicas(t *testing.T) {
	url := pgtest.Shared(t).NewDatabase(t)
	a, b := open(t, url, fast(nil)), open(t, url, fast(nil))
	responseTenants(t, a)
	ctx := t.Context()
	assert.NoError(t, a.ResponsesReady(), "before Run: Open reached the database")
	r := resp("resp_000000000000000000000001", "secret of acme")
	require.NoError(t, a.PutResponse(ctx, "acme", r))

	got, err := b.GetResponse(ctx, "acme", r.ID)
	require.NoError(t, err)
	assert.JSONEq(t, string(r.Response), string(got.Response))
	assert.JSONEq(t, string(r.Conversation), string(got.Conversation))
	assert.Equal(t, r.ID, got.ID)

	for _, st := range []*Store{a, b} {
		got, err := st.GetResponse(ctx, "beta", r.ID)
		assert.ErrorIs(t, err, tenancy.ErrNoResponse, "another tenant's id")
		assert.Empty(t, got.Response)
		assert.ErrorIs(t, st.DeleteResponse(ctx, "beta", r.ID), tenancy.ErrNoResponse, "another tenant's delete")
		_, err = st.GetResponse(ctx, "nosuch", r.ID)
		assert.ErrorIs(t, err, tenancy.ErrNoResponse, "a tenant that does not exist")
	}
	// The same id stored by another tenant is its own row.
	require.NoError(t, b.PutResponse(ctx, "beta", resp(r.ID, "beta's")))
	got, err = a.GetResponse(ctx, "acme", r.ID)
	require.NoError(t, err)
	assert.Contains(t, string(got.Response), "secret of acme")

	require.NoError(t, b.DeleteResponse(ctx, "acme", r.ID))
	_, err = a.GetResponse(ctx, "acme", r.ID)
	assert.ErrorIs(t, err, tenancy.ErrNoResponse, "deleted through B")
	assert.ErrorIs(t, a.DeleteResponse(ctx, "acme", r.ID), tenancy.ErrNoResponse, "deleted already")
	got, err = a.GetResponse(ctx, "beta", r.ID)
	require.NoError(t, err, "beta's is untouched")
	assert.Contains(t, string(got.Response), "beta's")

	// Kept as written: escapes a model's text can hold (NUL, a lone surrogate) and key order.
	odd := tenancy.StoredResponse{ID: "resp_000000000000000000000002", Response: []byte(`{"z":1,"a":"\u0000\ud800 \"x\""}`),
		Conversation: []byte(`[]`)}
	require.NoError(t, a.PutResponse(ctx, "acme", odd))
	got, err = b.GetResponse(ctx, "acme", odd.ID)
	require.NoError(t, err)
	assert.Equal(t, string(odd.Response), string(got.Response))

	// A tenant removed takes its responses with it; storing for it is ErrNoTenant.
	require.NoError(t, a.RemoveTenant(ctx, "beta"))
	_, err = b.GetResponse(ctx, "beta", r.ID)
	assert.ErrorIs(t, err, tenancy.ErrNoResponse)
	assert.ErrorIs(t, b.PutResponse(ctx, "beta", r), ErrNoTenant)
}

// TestResponsesRetention: a tenant keeps its newest
// tenancy.ResponsesPerTenant responses (another tenant's count is its
// own), none past tenancy.ResponseTTL — an expired one is not found at
// once, and its row is deleted by the tenant's next put or by Run's
// sweep.
func TestResponsesRetention(t *testing.T) {
	url := pgtest.Shared(t).NewDatabase(t)
	s := open(t, url, fast(nil))
	responseTenants(t, s)
	ctx := t.Context()
	conn, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer conn.Close(context.Background())

	id := func(i int) string { return fmt.Sprintf("resp_%024d", i) }
	for i := range tenancy.ResponsesPerTenant + 2 {
		require.NoError(t, s.PutResponse(ctx, "acme", resp(id(i), "x")))
	}
	require.NoError(t, s.PutResponse(ctx, "beta", resp(id(0), "x")))
	assert.Equal(t, tenancy.ResponsesPerTenant, rowsOf(t, conn, "acme"))
	for _, tc := range []struct {
		tenant string
		i      int
		kept   bool
	}{
		{"acme", 0, false}, {"acme", 1, false}, {"acme", 2, true},
		{"acme", tenancy.ResponsesPerTenant + 1, true}, {"beta", 0, true},
	} {
		_, err := s.GetResponse(ctx, tc.tenant, id(tc.i))
		if tc.kept {
			assert.NoError(t, err, "%s %d", tc.tenant, tc.i)
		} else {
			assert.ErrorIs(t, err, tenancy.ErrNoResponse, "%s %d", tc.tenant, tc.i)
		}
	}

	// Expired: not found, not deletable, and gone at the next put.
	age(t, conn, "acme", id(2))
	age(t, conn, "acme", id(3))
	_, err = s.GetResponse(ctx, "acme", id(2))
	assert.ErrorIs(t, err, tenancy.ErrNoResponse, "expired")
	assert.ErrorIs(t, s.DeleteResponse(ctx, "acme", id(3)), tenancy.ErrNoResponse, "expired")
	age(t, conn, "acme", id(4))
	require.NoError(t, s.PutResponse(ctx, "acme", resp(id(1000), "x")))
	_, err = s.GetResponse(ctx, "acme", id(5))
	assert.NoError(t, err, "a put past an expiry drops only the expired")
	assert.Equal(t, tenancy.ResponsesPerTenant-2, rowsOf(t, conn, "acme"), "ids 0-4 gone (3 deleted, 2 and 4 expired), 1000 added")

	// A tenant that stores no more: Run's sweep deletes its expired rows.
	age(t, conn, "beta", id(0))
	run(t, s)
	require.Eventually(t, func() bool { return rowsOf(t, conn, "beta") == 0 }, 3*time.Second, 20*time.Millisecond, "swept")
}

func TestResponsesSize(t *testing.T) {
	url := pgtest.Shared(t).NewDatabase(t)
	s := open(t, url, fast(nil))
	responseTenants(t, s)
	ctx := t.Context()
	// JSON strings of n bytes in all (with their quotes).
	str := func(n int) []byte { return []byte(`"` + strings.Repeat("x", n-2) + `"`) }
	half := tenancy.MaxResponseBytes / 2
	for i, tc := range []struct {
		resp, conv int
		err        error
	}{
		{half, tenancy.MaxResponseBytes - half, nil},
		{half, tenancy.MaxResponseBytes - half + 1, tenancy.ErrResponseTooLarge},
	} {
		r := tenancy.StoredResponse{ID: fmt.Sprintf("resp_%024d", i), Response: str(tc.resp), Conversation: str(tc.conv)}
		err := s.PutResponse(ctx, "acme", r)
		if tc.err != nil {
			assert.ErrorIs(t, err, tc.err)
			_, err = s.GetResponse(ctx, "acme", r.ID)
			assert.ErrorIs(t, err, tenancy.ErrNoResponse, "nothing stored")
			continue
		}
		require.NoError(t, err)
		got, err := s.GetResponse(ctx, "acme", r.ID)
		require.NoError(t, err)
		assert.Equal(t, tenancy.MaxResponseBytes, got.Bytes())
	}
}

// TestResponsesUnavailable: while the database refuses connections, every
// response call is an error wrapping tenancy.ErrUnavailable, with no
// stored data in it, and ResponsesReady says so once the listener has
// lost it; once it is back, nothing stored before is lost.
func TestResponsesUnavailable(t *testing.T) {
	pg := pgtest.Shared(t)
	url := pg.NewDatabase(t)
	s := open(t, url, fast(nil))
	responseTenants(t, s)
	run(t, s)
	ctx := t.Context()
	r := resp("resp_000000000000000000000001", "kept")
	require.NoError(t, s.PutResponse(ctx, "acme", r))
	require.NoError(t, s.ResponsesReady())

	conn, db := admin(t, pg, url)
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
	_, err = conn.Exec(ctx, "SELECT pg_terminate_backend(pid, 1000) FROM pg_stat_activity WHERE datname = $1", db)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return s.ResponsesReady() != nil }, 2*time.Second, 10*time.Millisecond)
	assert.ErrorIs(t, s.ResponsesReady(), tenancy.ErrUnavailable)

	_, err = s.GetResponse(ctx, "acme", r.ID)
	assert.ErrorIs(t, err, tenancy.ErrUnavailable, "get")
	assert.ErrorIs(t, s.PutResponse(ctx, "acme", resp("resp_000000000000000000000002", "x")), tenancy.ErrUnavailable, "put")
	assert.ErrorIs(t, s.DeleteResponse(ctx, "acme", r.ID), tenancy.ErrUnavailable, "delete")

	allow()
	require.Eventually(t, func() bool { return s.ResponsesReady() == nil }, 3*time.Second, 10*time.Millisecond)
	got, err := s.GetResponse(ctx, "acme", r.ID)
	require.NoError(t, err)
	assert.Contains(t, string(got.Response), "kept")
}

// TestResponsesConcurrentPuts: two replicas storing for one tenant at
// once keep it at exactly tenancy.ResponsesPerTenant, the newest.
func TestResponsesConcurrentPuts(t *testing.T) {
	url := pgtest.Shared(t).NewDatabase(t)
	a, b := open(t, url, fast(nil)), open(t, url, fast(nil))
	responseTenants(t, a)
	ctx := t.Context()
	const each = tenancy.ResponsesPerTenant/2 + 20
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for r, st := range []*Store{a, b} {
		wg.Go(func() {
			for i := range each {
				if err := st.PutResponse(ctx, "acme", resp(fmt.Sprintf("resp_%012d%012d", r, i), "x")); err != nil {
					errs[r] = err
					return
				}
			}
		})
	}
	wg.Wait()
	require.NoError(t, errors.Join(errs...))
	conn, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	assert.Equal(t, tenancy.ResponsesPerTenant, rowsOf(t, conn, "acme"))
	for r := range 2 {
		_, err := a.GetResponse(ctx, "acme", fmt.Sprintf("resp_%012d%012d", r, each-1))
		assert.NoError(t, err, "replica %d's last is kept", r)
	}
}
