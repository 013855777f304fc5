package pgstore

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// ErrSchemaTooNew is returned by Open for a database whose schema version
// is newer than this binary's migrations: a newer release migrated it,
// and this one must not write to it.
var ErrSchemaTooNew = errors.New("pgstore: the database schema is newer than this binary")

// migration is one numbered SQL file.
type migration struct {
	version int
	name    string
	sql     string
}

// migrations are the embedded files, in order; their numbers run 1, 2, ….
func migrations() ([]migration, error) {
	names, err := fs.Glob(migrationFS, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, n := range names {
		base := path.Base(n)
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			return nil, fmt.Errorf("pgstore: migration %s: name is not NNNN_what.sql", base)
		}
		b, err := migrationFS.ReadFile(n)
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: base, sql: string(b)})
	}
	slices.SortFunc(out, func(a, b migration) int { return a.version - b.version })
	for i, m := range out {
		if m.version != i+1 {
			return nil, fmt.Errorf("pgstore: migration %s: expected number %d", m.name, i+1)
		}
	}
	return out, nil
}

// schemaVersion is the newest schema version this binary knows.
func schemaVersion() int {
	ms, _ := migrations()
	return len(ms)
}

// advisoryLock is the key of the session advisory lock migrations take:
// "realizar" in ASCII.
const advisoryLock = 0x7265616c697a6172

// migrate applies the pending migrations, each in its own transaction,
// under the advisory lock, and returns the schema version the database
// is at afterwards.
func migrate(ctx context.Context, pool *pgxpool.Pool) (int, error) {
	ms, err := migrations()
	if err != nil {
		return 0, err
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return 0, unavailable(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", int64(advisoryLock)); err != nil {
		return 0, unavailable(err)
	}
	defer func() {
		_, _ = conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", int64(advisoryLock))
	}()
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS realizar_schema (
		version    integer PRIMARY KEY,
		name       text NOT NULL,
		applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return 0, unavailable(err)
	}
	var current int
	if err := conn.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM realizar_schema").Scan(&current); err != nil {
		return 0, unavailable(err)
	}
	if current > len(ms) {
		return current, fmt.Errorf("%w: it is at version %d, this binary knows up to %d", ErrSchemaTooNew, current, len(ms))
	}
	for _, m := range ms[current:] {
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, "INSERT INTO realizar_schema (version, name) VALUES ($1, $2)", m.version, m.name)
			return err
		})
		if err != nil {
			return current, fmt.Errorf("pgstore: migration %s: %w", m.name, unavailable(err))
		}
		current = m.version
	}
	return current, nil
}
