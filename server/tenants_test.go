package server

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseTenants(t *testing.T) {
	ts, err := ParseTenants(testTenantsFile())
	require.NoError(t, err)
	a, err := ts.Authenticate("Bearer " + keyA)
	require.NoError(t, err)
	assert.Equal(t, "a", a.Name)
	assert.Equal(t, 65536, a.Limits.MaxPluginBytes)
	assert.Equal(t, Duration(2*time.Second), a.Limits.StepDeadline)
	b, err := ts.Authenticate("Bearer " + keyB)
	require.NoError(t, err)
	assert.Equal(t, DefaultLimits().MaxPluginBytes, b.Limits.MaxPluginBytes)

	for _, tc := range []struct{ name, file string }{
		{"not json", `{`},
		{"no tenants", `{"tenants": []}`},
		{"bad name", `{"tenants": [{"name": "A B", "key_sha256": ["` + HashKey("k") + `"]}]}`},
		{"no key", `{"tenants": [{"name": "a"}]}`},
		{"short hash", `{"tenants": [{"name": "a", "key_sha256": ["abcd"]}]}`},
		{"shared key", `{"tenants": [{"name": "a", "key_sha256": ["` + HashKey("k") + `"]}, {"name": "b", "key_sha256": ["` + HashKey("k") + `"]}]}`},
		{"duplicate", `{"tenants": [{"name": "a", "key_sha256": ["` + HashKey("k") + `"]}, {"name": "a", "key_sha256": ["` + HashKey("j") + `"]}]}`},
		{"bad duration", `{"tenants": [{"name": "a", "key_sha256": ["` + HashKey("k") + `"], "limits": {"step_deadline": "soon"}}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseTenants([]byte(tc.file))
			assert.ErrorIs(t, err, ErrTenants)
		})
	}
}

func TestTenantAdmit(t *testing.T) {
	tn := newTenant("a", Limits{MaxConcurrent: 2, RequestsPerMinute: 3}.or(DefaultLimits()))
	now := time.Now()
	r1, err := tn.admit(now)
	require.NoError(t, err)
	r2, err := tn.admit(now)
	require.NoError(t, err)
	_, err = tn.admit(now)
	var e *APIError
	require.ErrorAs(t, err, &e)
	assert.Equal(t, "concurrency_limit_exceeded", e.Code)
	r1()
	r2()
	r3, err := tn.admit(now)
	require.NoError(t, err)
	r3()
	_, err = tn.admit(now)
	require.ErrorAs(t, err, &e)
	assert.Equal(t, http.StatusTooManyRequests, e.Status)
	assert.Equal(t, "rate_limit_exceeded", e.Code)
	assert.InDelta(t, 20*time.Second, e.RetryAfter, float64(time.Second))
	_, err = tn.admit(now.Add(21 * time.Second))
	assert.NoError(t, err, "the bucket refills")
}

func FuzzParseTenants(f *testing.F) {
	f.Add(testTenantsFile())
	f.Add([]byte(`{"tenants": [{"name": "a", "key_sha256": ["` + HashKey("k") + `"], "limits": {"step_deadline": "1ms"}}]}`))
	f.Add([]byte(`{"defaults": {"memory_pages": 70000}, "tenants": []}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		ts, err := ParseTenants(b)
		if err != nil {
			require.ErrorIs(t, err, ErrTenants)
			return
		}
		for _, tn := range ts.All() {
			require.Positive(t, tn.Limits.MaxConcurrent)
			require.Positive(t, tn.Limits.RequestsPerMinute)
		}
	})
}
