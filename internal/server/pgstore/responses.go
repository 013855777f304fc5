package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/realizar-host/realizar-host/internal/tenancy"
)

// Stored responses, table realizar_responses (migration 0002): a
// tenancy.ResponseStore shared by the replicas, so that a response stored
// through one is continued, read and deleted through any. Nothing of it
// is cached: each call is one statement or transaction, bounded by
// Options.OpTimeout, each naming the tenant.
//
// Retention is tenancy's: a put deletes, in its transaction, the tenant's
// expired rows and those past tenancy.ResponsesPerTenant (oldest first,
// by insertion order); reads and deletes ignore expired rows; and Run
// deletes every tenant's expired rows at each resync (every
// Options.Resync, on each replica), so a tenant that stops storing does
// not keep its rows. Age is the database's clock (now()), the same for
// every replica.

// foreignKeyViolation is PostgreSQL's SQLSTATE for a row whose tenant
// is not in realizar_tenants.
const foreignKeyViolation = "23503"

// ttlSeconds is tenancy.ResponseTTL in seconds, for make_interval.
var ttlSeconds = tenancy.ResponseTTL.Seconds()

// PutResponse implements tenancy.ResponseStore. Its three statements
// (lock the tenant's row, insert, trim) go in one round trip as one
// implicit transaction; holding the tenant's row keeps replicas storing
// for one tenant together at its bound exactly. ErrNoTenant when the
// tenant was removed.
func (s *Store) PutResponse(ctx context.Context, tenant string, r tenancy.StoredResponse) error {
	if err := r.CheckSize(); err != nil {
		return err
	}
	ctx, cancel := s.op(ctx)
	defer cancel()
	b := &pgx.Batch{}
	b.Queue("SELECT 1 FROM realizar_tenants WHERE name = $1 FOR UPDATE", tenant)
	b.Queue(`INSERT INTO realizar_responses (tenant, id, response, conversation, bytes) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (tenant, id) DO UPDATE SET response = excluded.response, conversation = excluded.conversation,
			bytes = excluded.bytes, created_at = excluded.created_at`,
		tenant, r.ID, string(r.Response), string(r.Conversation), r.Bytes())
	b.Queue(`DELETE FROM realizar_responses WHERE tenant = $1 AND (
			created_at < now() - make_interval(secs => $2)
			OR seq < (SELECT min(seq) FROM (SELECT seq FROM realizar_responses WHERE tenant = $1 ORDER BY seq DESC LIMIT $3) AS kept))`,
		tenant, ttlSeconds, tenancy.ResponsesPerTenant)
	err := s.pool.SendBatch(ctx, b).Close()
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == foreignKeyViolation {
		return fmt.Errorf("%w: tenant %s was removed", ErrNoTenant, tenant)
	}
	return unavailable(err)
}

// GetResponse implements tenancy.ResponseStore.
func (s *Store) GetResponse(ctx context.Context, tenant, id string) (tenancy.StoredResponse, error) {
	ctx, cancel := s.op(ctx)
	defer cancel()
	r := tenancy.StoredResponse{ID: id}
	var resp, conv string
	err := s.pool.QueryRow(ctx, `SELECT response, conversation FROM realizar_responses
		WHERE tenant = $1 AND id = $2 AND created_at >= now() - make_interval(secs => $3)`,
		tenant, id, ttlSeconds).Scan(&resp, &conv)
	if errors.Is(err, pgx.ErrNoRows) {
		return tenancy.StoredResponse{}, tenancy.ErrNoResponse
	}
	if err != nil {
		return tenancy.StoredResponse{}, unavailable(err)
	}
	r.Response, r.Conversation = []byte(resp), []byte(conv)
	return r, nil
}

// DeleteResponse implements tenancy.ResponseStore. An expired response
// is deleted too, and is ErrNoResponse as it is to GetResponse.
func (s *Store) DeleteResponse(ctx context.Context, tenant, id string) error {
	ctx, cancel := s.op(ctx)
	defer cancel()
	var live bool
	err := s.pool.QueryRow(ctx, `DELETE FROM realizar_responses WHERE tenant = $1 AND id = $2
		RETURNING created_at >= now() - make_interval(secs => $3)`, tenant, id, ttlSeconds).Scan(&live)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return tenancy.ErrNoResponse
	case err != nil:
		return unavailable(err)
	case !live:
		return tenancy.ErrNoResponse
	}
	return nil
}

// ResponsesReady implements tenancy.ResponseStore: an error wrapping
// tenancy.ErrUnavailable from when Run's listener loses the database (or
// fails to reach it) until it listens again; nil otherwise, before Run
// too (Open reached the database).
func (s *Store) ResponsesReady() error {
	if s.lost.Load() {
		return fmt.Errorf("%w: the listener has no connection to the database", tenancy.ErrUnavailable)
	}
	return nil
}

// sweepResponses deletes every tenant's expired responses and returns
// how many.
func (s *Store) sweepResponses(ctx context.Context) (int64, error) {
	ctx, cancel := s.op(ctx)
	defer cancel()
	tag, err := s.pool.Exec(ctx, "DELETE FROM realizar_responses WHERE created_at < now() - make_interval(secs => $1)", ttlSeconds)
	if err != nil {
		return 0, unavailable(err)
	}
	return tag.RowsAffected(), nil
}
