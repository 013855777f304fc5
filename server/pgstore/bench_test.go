package pgstore

import (
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/realizar-host/realizar-host/internal/pgtest"
)

// BenchmarkSharedLimiter is the alternative to each replica enforcing its
// share of a tenant's rate: one token bucket per tenant in the database,
// refilled and taken from in one UPDATE per request. It measures that
// round trip on loopback (RATIONALE.md, "Rate limits across replicas"):
//
//	go test -run '^$' -bench SharedLimiter ./server/pgstore/
func BenchmarkSharedLimiter(b *testing.B) {
	url := pgtest.Shared(b).NewDatabase(b)
	pool, err := pgxpool.New(b.Context(), url)
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Close()
	if _, err := pool.Exec(b.Context(), `CREATE TABLE bucket (tenant text PRIMARY KEY, tokens float8 NOT NULL, at timestamptz NOT NULL);
		INSERT INTO bucket VALUES ('acme', 1e12, now())`); err != nil {
		b.Fatal(err)
	}
	const take = `UPDATE bucket SET tokens = least($2, tokens + extract(epoch FROM clock_timestamp() - at) * $3) - 1,
		at = clock_timestamp() WHERE tenant = $1 RETURNING tokens >= 0`
	b.Run("serial", func(b *testing.B) {
		for b.Loop() {
			var ok bool
			if err := pool.QueryRow(b.Context(), take, "acme", 1e12, 1e9).Scan(&ok); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				var ok bool
				if err := pool.QueryRow(b.Context(), take, "acme", 1e12, 1e9).Scan(&ok); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}
