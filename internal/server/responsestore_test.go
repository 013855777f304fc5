package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/internal/tenancy"
)

// flakyResponses is a memory response store whose database can be
// switched off: while down, ResponsesReady and (separately) every call
// fail as pgstore's do, with an error wrapping tenancy.ErrUnavailable.
// It stands for the moment between the server's readiness check and its
// put, which the real database cannot be timed to hit.
type flakyResponses struct {
	*tenancy.MemResponses
	notReady, down atomic.Bool
	calls          atomic.Int64
}

var errDown = fmt.Errorf("%w: dial tcp 10.1.2.3:5432: connection refused", tenancy.ErrUnavailable)

func (f *flakyResponses) PutResponse(ctx context.Context, tenant string, r tenancy.StoredResponse) error {
	f.calls.Add(1)
	if f.down.Load() {
		return errDown
	}
	return f.MemResponses.PutResponse(ctx, tenant, r)
}

func (f *flakyResponses) GetResponse(ctx context.Context, tenant, id string) (tenancy.StoredResponse, error) {
	f.calls.Add(1)
	if f.down.Load() {
		return tenancy.StoredResponse{}, errDown
	}
	return f.MemResponses.GetResponse(ctx, tenant, id)
}

func (f *flakyResponses) DeleteResponse(ctx context.Context, tenant, id string) error {
	f.calls.Add(1)
	if f.down.Load() {
		return errDown
	}
	return f.MemResponses.DeleteResponse(ctx, tenant, id)
}

func (f *flakyResponses) ResponsesReady() error {
	if f.notReady.Load() {
		return errDown
	}
	return nil
}

// TestResponsesStoreDown: a store that cannot take a response is a 503
// store_unavailable before any generation (nothing generated for the
// tenant); one that fails at the put is a 503 after it, or the stream's
// error event instead of response.completed; reads and deletes are 503s;
// the client never sees the store's own error; store false is served.
func TestResponsesStoreDown(t *testing.T) {
	store := &flakyResponses{MemResponses: tenancy.NewMemResponses()}
	s := startServerConfig(t, testTenantsFile(), Config{Responses: store})
	generated := func() float64 { return testutil.ToFloat64(s.srv.metrics.Tokens.WithLabelValues("a")) }
	code, body := s.do(t, "POST", "/v1/responses", keyA, []byte(`{"input": "Hello", "max_output_tokens": 2}`))
	require.Equal(t, http.StatusOK, code, string(body))
	var o responseObject
	require.NoError(t, json.Unmarshal(body, &o))

	unavailable := func(what string, code int, body []byte, param string) {
		t.Helper()
		assert.Equal(t, http.StatusServiceUnavailable, code, "%s: %s", what, body)
		var e struct{ Error APIError }
		require.NoError(t, json.Unmarshal(body, &e), what)
		assert.Equal(t, "store_unavailable", e.Error.Code, what)
		assert.Equal(t, param, e.Error.Param, what)
		assert.Contains(t, e.Error.Message, "the response store is unavailable", what)
		assert.NotContains(t, string(body), "10.1.2.3", "%s: the store's error stays in the log", what)
	}

	// Known down: refused before generation.
	store.notReady.Store(true)
	store.down.Store(true)
	before := generated()
	for _, b := range []string{
		`{"input": "Hello", "max_output_tokens": 2}`,
		`{"input": "Hello", "max_output_tokens": 2, "stream": true}`,
	} {
		code, body = s.do(t, "POST", "/v1/responses", keyA, []byte(b))
		unavailable(b, code, body, "store")
	}
	code, body = s.do(t, "POST", "/v1/responses", keyA, []byte(`{"input": "x", "store": false, "previous_response_id": "`+o.ID+`"}`))
	unavailable("previous_response_id", code, body, "previous_response_id")
	code, body = s.do(t, "GET", "/v1/responses/"+o.ID, keyA, nil)
	unavailable("GET", code, body, "")
	code, body = s.do(t, "DELETE", "/v1/responses/"+o.ID, keyA, nil)
	unavailable("DELETE", code, body, "")
	assert.Equal(t, before, generated(), "nothing generated for the refused requests")
	code, body = s.do(t, "POST", "/v1/responses", keyA, []byte(`{"input": "Hello", "max_output_tokens": 2, "store": false}`))
	assert.Equal(t, http.StatusOK, code, "store false needs no store: %s", body)

	// Down between the check and the put: the generated response is not
	// returned as if stored.
	store.notReady.Store(false)
	code, body = s.do(t, "POST", "/v1/responses", keyA, []byte(`{"input": "Hello", "max_output_tokens": 2}`))
	unavailable("put", code, body, "store")
	assert.Contains(t, string(body), "generated but not stored")
	code, body = s.do(t, "POST", "/v1/responses", keyA, []byte(`{"input": "Hello", "max_output_tokens": 2, "stream": true}`))
	require.Equal(t, http.StatusOK, code, string(body))
	var events []string
	var last string
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		if name, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
			events = append(events, name)
		}
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			last = data
		}
	}
	require.NotEmpty(t, events)
	assert.Equal(t, "error", events[len(events)-1], "the stream ends with an error event: %v", events)
	assert.NotContains(t, events, "response.completed")
	assert.Contains(t, last, "store_unavailable")
	assert.NotContains(t, string(body), "10.1.2.3")

	store.down.Store(false)
	code, body = s.do(t, "GET", "/v1/responses/"+o.ID, keyA, nil)
	assert.Equal(t, http.StatusOK, code, "back: %s", body)
}

// TestResponsesIDShape: an id not of the server's shape (resp_ and 24
// hex digits) is a 404 without a call to the store.
func TestResponsesIDShape(t *testing.T) {
	store := &flakyResponses{MemResponses: tenancy.NewMemResponses()}
	s := startServerConfig(t, testTenantsFile(), Config{Responses: store})
	for _, id := range []string{"x", "resp_0123", "resp_0123456789abcdef0123456G", "resp_0123456789ABCDEF01234567", "%00"} {
		for _, method := range []string{"GET", "DELETE"} {
			code, body := s.do(t, method, "/v1/responses/"+id, keyA, nil)
			assert.Equal(t, http.StatusNotFound, code, "%s %s: %s", method, id, body)
		}
		code, body := s.do(t, "POST", "/v1/responses", keyA, []byte(`{"input": "x", "max_output_tokens": 1, "previous_response_id": "`+id+`"}`))
		assert.Equal(t, http.StatusNotFound, code, "previous_response_id %s: %s", id, body)
	}
	assert.Zero(t, store.calls.Load())
}

// TestResponsesTooLarge: a request whose conversation would pass
// tenancy.MaxResponseBytes is refused before generation when it is to be
// stored.
func TestResponsesTooLarge(t *testing.T) {
	s := startServer(t, testTenantsFile(), 0)
	prev := tenancy.StoredResponse{ID: "resp_0123456789abcdef01234567", Response: []byte(`{}`),
		Conversation: []byte(`[{"type":"message","role":"user","text":"` + strings.Repeat("a", tenancy.MaxResponseBytes-64) + `"}]`)}
	require.NoError(t, s.srv.responses.PutResponse(context.Background(), "a", prev))
	code, body := s.do(t, "POST", "/v1/responses", keyA, []byte(`{"input": "`+strings.Repeat("b", 100)+`", "max_output_tokens": 1, "previous_response_id": "`+prev.ID+`"}`))
	assert.Equal(t, http.StatusBadRequest, code, string(body))
	assert.Contains(t, string(body), "response_too_large")
}
