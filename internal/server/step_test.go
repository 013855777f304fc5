package server

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/realizar-host/realizar-host/internal/tenancy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStepDeadlineCoversTheStep: the tenant's step_deadline bounds a
// decode step's plugin calls together. Two processors that each spin
// 150 ms (host/testdata/spin.wat) fit its 250 ms one by one, not one
// step: the request fails as a plugin timeout naming the second; one of
// them alone is fine.
func TestStepDeadlineCoversTheStep(t *testing.T) {
	tenants := fmt.Appendf(nil, `{"defaults": {"step_deadline": "250ms", "requests_per_minute": 100000},
  "tenants": [{"name": "a", "key_sha256": [%q]}]}`, tenancy.HashKey(keyA))
	s := startServer(t, tenants, 8)
	sum := s.upload(t, keyA, testdataWasm(t, "spin.wasm"))
	request := func(processors string) (int, []byte) {
		return s.do(t, "POST", "/v1/completions", keyA, fmt.Appendf(nil,
			`{"prompt": "Once", "max_tokens": 1, "temperature": 0, "realizar": {"processors": [%s]}}`, processors))
	}
	one := fmt.Sprintf(`{"plugin": %q}`, sum)
	code, body := request(one + "," + one)
	require.Equal(t, http.StatusInternalServerError, code, string(body))
	e := errorOf(t, body)
	assert.Equal(t, "timeout", e.Code, e.Message)
	assert.Contains(t, e.Message, "processor spin 1.0.0 (sha256 "+sum[:12])
	assert.Contains(t, e.Message, "the step's deadline of 250ms")

	code, body = request(one)
	require.Equal(t, http.StatusOK, code, string(body))
}
