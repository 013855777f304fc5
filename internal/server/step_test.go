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
// decode step's plugin calls together, not each call alone. A tenant's
// plugins run with a per-call limit equal to the step deadline, so a
// processor that never returns (host/testdata/hang.wat), called second in
// the step, is cut by whichever deadline comes first: its own call's ends
// a full step_deadline after the call began, the step's that long after
// the step began, before the first processor's call. Only the step's can
// end the call, whatever the machine's speed, and the error says so. The
// first processor (ban) returns at once; alone it is fine.
func TestStepDeadlineCoversTheStep(t *testing.T) {
	tenants := fmt.Appendf(nil, `{"defaults": {"step_deadline": "1s", "requests_per_minute": 100000},
  "tenants": [{"name": "a", "key_sha256": [%q]}]}`, tenancy.HashKey(keyA))
	s := startServer(t, tenants, 8)
	ban := s.upload(t, keyA, testdataWasm(t, "ban.wasm"))
	hang := s.upload(t, keyA, testdataWasm(t, "hang.wasm"))
	request := func(processors ...string) (int, []byte) {
		list := ""
		for i, p := range processors {
			if i > 0 {
				list += ","
			}
			list += fmt.Sprintf(`{"plugin": %q}`, p)
		}
		return s.do(t, "POST", "/v1/completions", keyA, fmt.Appendf(nil,
			`{"prompt": "Once", "max_tokens": 1, "temperature": 0, "realizar": {"processors": [%s]}}`, list))
	}
	code, body := request(ban, hang)
	require.Equal(t, http.StatusInternalServerError, code, string(body))
	e := errorOf(t, body)
	assert.Equal(t, "timeout", e.Code, e.Message)
	assert.Contains(t, e.Message, "processor hang 1.0.0 (sha256 "+hang[:12])
	assert.Contains(t, e.Message, "the step's deadline of 1s")
	assert.Contains(t, e.Message, "ran out during this call")

	code, body = request(ban)
	require.Equal(t, http.StatusOK, code, string(body))
}
