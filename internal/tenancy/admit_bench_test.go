package tenancy

import (
	"testing"
	"time"
)

// BenchmarkAdmit is what each replica pays to enforce its share of a
// tenant's rate (and its concurrency): one in-memory admission, against
// BenchmarkSharedLimiter's database round trip (RATIONALE.md).
func BenchmarkAdmit(b *testing.B) {
	t := newTenant("acme", Limits{MaxConcurrent: 1 << 30, RequestsPerMinute: 1 << 30}.or(DefaultLimits()))
	for b.Loop() {
		release, err := t.Admit(time.Now())
		if err != nil {
			b.Fatal(err)
		}
		release()
	}
}
