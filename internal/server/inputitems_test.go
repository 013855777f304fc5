package server

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestInputItems: a stored response's input items, its tenant's only,
// with the query's errors naming the parameter.
func TestInputItems(t *testing.T) {
	s := startServer(t, testTenantsFile(), 0)
	code, body := s.do(t, "POST", "/v1/responses", keyA, []byte(`{"input": "Hello", "max_output_tokens": 2}`))
	require.Equal(t, http.StatusOK, code, string(body))
	var first responseObject
	require.NoError(t, json.Unmarshal(body, &first))
	code, body = s.do(t, "POST", "/v1/responses", keyA, []byte(`{"input": [{"role": "user", "content": "Again"}], "max_output_tokens": 2, "previous_response_id": "`+first.ID+`"}`))
	require.Equal(t, http.StatusOK, code, string(body))
	var second responseObject
	require.NoError(t, json.Unmarshal(body, &second))

	path := "/v1/responses/" + second.ID + "/input_items"
	code, body = s.do(t, "GET", path+"?order=asc", keyA, nil)
	require.Equal(t, http.StatusOK, code, string(body))
	var page inputItemList
	require.NoError(t, json.Unmarshal(body, &page))
	assert.Equal(t, "list", page.Object)
	require.Len(t, page.Data, 3, string(body)) // Hello, the first answer, Again
	for i, want := range []struct{ role, part, text string }{
		{"user", "input_text", "Hello"}, {"assistant", "output_text", (*first.Output[0].Content)[0].Text}, {"user", "input_text", "Again"},
	} {
		it := page.Data[i]
		assert.Equal(t, "message", it.Type)
		assert.Equal(t, want.role, it.Role)
		assert.Equal(t, want.part, (*it.Content)[0].Type)
		assert.Equal(t, want.text, (*it.Content)[0].Text)
	}
	assert.Equal(t, page.Data[0].ID, *page.FirstID)
	assert.False(t, page.HasMore)

	code, body = s.do(t, "GET", path+"?limit=1&after="+page.Data[2].ID, keyA, nil) // desc: after the newest
	require.Equal(t, http.StatusOK, code, string(body))
	var next inputItemList
	require.NoError(t, json.Unmarshal(body, &next))
	require.Len(t, next.Data, 1)
	assert.Equal(t, page.Data[1].ID, next.Data[0].ID)
	assert.True(t, next.HasMore)

	for _, tc := range []struct {
		key, query string
		code       int
		param      string
	}{
		{keyB, "", http.StatusNotFound, ""},
		{keyA, "?limit=0", http.StatusBadRequest, "limit"},
		{keyA, "?limit=x", http.StatusBadRequest, "limit"},
		{keyA, "?order=up", http.StatusBadRequest, "order"},
		{keyA, "?after=msg_nope", http.StatusBadRequest, "after"},
	} {
		code, body := s.do(t, "GET", path+tc.query, tc.key, nil)
		require.Equal(t, tc.code, code, "%s: %s", tc.query, body)
		assert.Equal(t, tc.param, errorOf(t, body).Param, tc.query)
		assert.NotContains(t, string(body), "Hello")
	}
	code, _ = s.do(t, "GET", "/v1/responses/resp_nope/input_items", keyA, nil)
	assert.Equal(t, http.StatusNotFound, code)
}
