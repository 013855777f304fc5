package tenancy

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/realizar-host/realizar-host/host"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	keyA = "sk-tenant-a-0123456789"
	keyB = "sk-tenant-b-0123456789"
	keyC = "sk-tenant-c-0123456789"
)

// testTenantsFile is a tenants file of three tenants, a, b and c (keys
// keyA, keyB, keyC), as package server's tests write it.
func testTenantsFile() []byte {
	return fmt.Appendf(nil, `{
  "defaults": {"step_deadline": "2s", "max_concurrent": 32, "requests_per_minute": 100000, "memory_pages": 64},
  "tenants": [
    {"name": "a", "key_sha256": [%q], "limits": {"max_plugin_bytes": 65536}},
    {"name": "b", "key_sha256": [%q]},
    {"name": "c", "key_sha256": [%q]}
  ]
}`, HashKey(keyA), HashKey(keyB), HashKey(keyC))
}

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
	r1, err := tn.Admit(now)
	require.NoError(t, err)
	r2, err := tn.Admit(now)
	require.NoError(t, err)
	_, err = tn.Admit(now)
	var e *LimitError
	require.ErrorAs(t, err, &e)
	assert.Equal(t, codeConcurrency, e.Code)
	assert.Equal(t, time.Second, e.RetryAfter)
	assert.Equal(t, "tenant a has 2 requests in flight, its limit", e.Error())
	r1()
	r2()
	r3, err := tn.Admit(now)
	require.NoError(t, err)
	r3()
	_, err = tn.Admit(now)
	require.ErrorAs(t, err, &e)
	assert.Equal(t, CodeRate, e.Code)
	assert.Equal(t, "tenant a is over 3 requests per minute", e.Msg)
	assert.InDelta(t, 20*time.Second, e.RetryAfter, float64(time.Second))
	_, err = tn.Admit(now.Add(21 * time.Second))
	assert.NoError(t, err, "the bucket refills")
}

// TestAuthenticate: no key is ErrNoKey, an unknown one ErrBadKey; a set
// without keys admits everyone as the anonymous tenant.
func TestAuthenticate(t *testing.T) {
	ts, err := ParseTenants(testTenantsFile())
	require.NoError(t, err)
	for _, h := range []string{"", "Bearer ", "Bearer  ", "Basic " + keyA, keyA} {
		_, err := ts.Authenticate(h)
		assert.ErrorIs(t, err, ErrNoKey, "%q", h)
	}
	_, err = ts.Authenticate("Bearer sk-nobody")
	assert.ErrorIs(t, err, ErrBadKey)
	a, err := ts.Authenticate("Bearer  " + keyA + " ")
	require.NoError(t, err)
	assert.Same(t, ts.Tenant("a"), a)
	assert.Equal(t, 3, ts.Len())
	assert.Nil(t, ts.Tenant("nobody"))

	anon := Anonymous(Limits{MaxConcurrent: 1})
	for _, h := range []string{"", "Bearer sk-nobody"} {
		tn, err := anon.Authenticate(h)
		require.NoError(t, err)
		assert.Equal(t, "anonymous", tn.Name)
		assert.Equal(t, 1, tn.Limits.MaxConcurrent)
		assert.Equal(t, DefaultLimits().RequestsPerMinute, tn.Limits.RequestsPerMinute)
	}
	assert.False(t, errors.Is(ErrNoKey, ErrBadKey))
}

// TestNewTenantsKeepsState: a reloaded set keeps an unchanged tenant (its
// limiter and requests in flight) and renews one whose limits changed.
func TestNewTenantsKeepsState(t *testing.T) {
	specs := []TenantSpec{{Name: "a", KeySHA256: []string{HashKey(keyA)}, Limits: DefaultLimits()},
		{Name: "b", KeySHA256: []string{HashKey(keyB)}, Limits: DefaultLimits()}}
	first, err := NewTenants(specs, nil)
	require.NoError(t, err)
	specs[1].Limits.MaxConcurrent = 3
	specs[0].KeySHA256 = append(specs[0].KeySHA256, HashKey(keyC))
	second, err := NewTenants(specs, first)
	require.NoError(t, err)
	assert.Same(t, first.Tenant("a"), second.Tenant("a"))
	assert.NotSame(t, first.Tenant("b"), second.Tenant("b"))
	c, err := second.Authenticate("Bearer " + keyC)
	require.NoError(t, err)
	assert.Equal(t, "a", c.Name)

	empty, err := NewTenants(nil, nil)
	require.NoError(t, err)
	_, err = empty.Authenticate("Bearer " + keyA)
	assert.ErrorIs(t, err, ErrBadKey)
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

// TestLimitsOrFillsEveryField: a field added to Limits is filled from the
// defaults too (Limits.or names each one).
func TestLimitsOrFillsEveryField(t *testing.T) {
	typ := reflect.TypeFor[Limits]()
	for i := range typ.NumField() {
		var d Limits
		f := reflect.ValueOf(&d).Elem().Field(i)
		switch f.Kind() {
		case reflect.Int, reflect.Int64:
			f.SetInt(7)
		case reflect.Uint32:
			f.SetUint(7)
		default:
			t.Fatalf("Limits.%s: a %s; teach this test its kind", typ.Field(i).Name, f.Kind())
		}
		got := reflect.ValueOf(Limits{}.Or(d)).Field(i)
		assert.False(t, got.IsZero(), "Limits.or leaves %s unset", typ.Field(i).Name)
	}
}

// TestDefaultLimitsAreTheHosts: a tenant's plugins run by default under
// the host's own limits, the CLI's (one declaration, host's).
func TestDefaultLimitsAreTheHosts(t *testing.T) {
	got := DefaultLimits().HostLimits()
	assert.Equal(t, uint32(host.DefaultMemoryPages), got.MemoryPages)
	assert.Equal(t, host.DefaultCallTimeout, got.CallTimeout)
}

// TestResolveKeepsWhatTheFileSets: a resolved tenant's limits are its
// own and the file's defaults, not the built-in ones (a store importing
// the file keeps those out), while its Tenant runs with all of them.
func TestResolveKeepsWhatTheFileSets(t *testing.T) {
	f := TenantsFile{Defaults: Limits{MaxConcurrent: 2}, Tenants: []TenantSpec{
		{Name: "a", KeySHA256: []string{HashKey(keyA)}, Limits: Limits{RequestsPerMinute: 7}}}}
	specs, err := f.Resolve()
	require.NoError(t, err)
	assert.Equal(t, Limits{MaxConcurrent: 2, RequestsPerMinute: 7}, specs[0].Limits)
	ts, err := NewTenants(specs, nil)
	require.NoError(t, err)
	assert.Equal(t, Limits{MaxConcurrent: 2, RequestsPerMinute: 7}.Or(DefaultLimits()), ts.byName["a"].Limits)
}

// TestLimitOutOfRange: every limit out of its range — each field of
// Limits set below 0, memory_pages past host.MaxMemoryPages — is a
// *host.LimitError naming its JSON key, the value and the range, through
// a tenants file and CheckLimits alike.
func TestLimitOutOfRange(t *testing.T) {
	typ := reflect.TypeFor[Limits]()
	for i := range typ.NumField() {
		key, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		var l Limits
		f := reflect.ValueOf(&l).Elem().Field(i)
		value := "-1"
		switch f.Kind() {
		case reflect.Int, reflect.Int64:
			if typ.Field(i).Type == reflect.TypeFor[Duration]() {
				value = "-1ns"
			}
			f.SetInt(-1)
		case reflect.Uint32:
			f.SetUint(host.MaxMemoryPages + 1)
			value = fmt.Sprint(host.MaxMemoryPages + 1)
		default:
			t.Fatalf("Limits.%s: a %s; teach this test its kind", typ.Field(i).Name, f.Kind())
		}
		t.Run(key, func(t *testing.T) {
			var le *host.LimitError
			require.ErrorAs(t, CheckLimits(l), &le)
			assert.Equal(t, key, le.Key)
			assert.Equal(t, value, le.Value)
			assert.Contains(t, le.Error(), key+" "+value+" is out of range: 0 (the default) ")

			raw, err := json.Marshal(map[string]any{"tenants": []any{map[string]any{"name": "a", "key_sha256": []string{HashKey("k")}, "limits": l}}})
			require.NoError(t, err)
			_, err = ParseTenants(raw)
			require.ErrorIs(t, err, ErrTenants)
			require.ErrorAs(t, err, &le)
			assert.Contains(t, err.Error(), "tenant a: "+key+" "+value+" is out of range")
		})
	}
}
