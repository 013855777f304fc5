package pgstore

import (
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/realizar-host/realizar-host/internal/pgtest"
	"github.com/realizar-host/realizar-host/internal/tenancy"
)

// BenchmarkSharedLimiter is the alternative to each replica enforcing its
// share of a tenant's rate: one token bucket per tenant in the database,
// refilled and taken from in one UPDATE per request. It measures that
// round trip on loopback (RATIONALE.md, "Rate limits across replicas"):
//
//	go test -run '^$' -bench SharedLimiter ./internal/server/pgstore/
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

// BenchmarkResponses is what a stored response costs the request that
// stores it (put: the transaction that inserts and trims) and the one
// that continues it (get), for a response of about 4 KiB with its
// tenant at its bound of tenancy.ResponsesPerTenant, on loopback, beside
// the reference of one round trip (SELECT 1):
//
//	go test -run '^$' -bench Responses ./internal/server/pgstore/
func BenchmarkResponses(b *testing.B) {
	url := pgtest.Shared(b).NewDatabase(b)
	s, err := Open(b.Context(), url, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if err := s.AddTenant(b.Context(), "acme", tenancy.Limits{}, tenancy.HashKey("k")); err != nil {
		b.Fatal(err)
	}
	text := strings.Repeat("a", 2000)
	r := func(i int) tenancy.StoredResponse {
		return tenancy.StoredResponse{ID: fmt.Sprintf("resp_%024d", i), Response: []byte(`{"text":"` + text + `"}`),
			Conversation: []byte(`[{"type":"message","role":"user","text":"` + text + `"}]`)}
	}
	n := 0
	for range tenancy.ResponsesPerTenant {
		if err := s.PutResponse(b.Context(), "acme", r(n)); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.Run("roundtrip", func(b *testing.B) { // the reference: one statement's round trip
		for b.Loop() {
			var one int
			if err := s.pool.QueryRow(b.Context(), "SELECT 1").Scan(&one); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("put", func(b *testing.B) {
		for b.Loop() {
			if err := s.PutResponse(b.Context(), "acme", r(n)); err != nil {
				b.Fatal(err)
			}
			n++
		}
	})
	b.Run("get", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.GetResponse(b.Context(), "acme", r(n-1).ID); err != nil {
				b.Fatal(err)
			}
		}
	})
}
