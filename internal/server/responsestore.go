package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"time"

	"github.com/realizar-host/realizar-host/internal/tenancy"
)

// Stored responses (POST /v1/responses with store) are kept by the
// server's tenancy.ResponseStore: in memory, or in PostgreSQL for
// replicas (Config.Responses). The store keeps opaque JSON; this file
// encodes the Response and its conversation for it, reads them back, and
// answers its errors in the Responses API's terms.

// responseIDPattern is the shape of the ids the server gives responses
// (randomID("resp_")): an id of another shape was never stored, and is a
// 404 without asking the store.
var responseIDPattern = regexp.MustCompile(`^resp_[0-9a-f]{24}$`)

// responseLoad is what a Responses request reads before its preparation
// (loadResponses): the previous response's conversation.
type responseLoad struct {
	previousID string // the previous_response_id it read ("" none)
	previous   []respItem
}

// loadResponses reads what the Responses request body needs from the
// store, after admission and before the request takes a place in the
// preparation pool, so that a slow or absent store costs only the
// requests that need it: the conversation previous_response_id names
// (another tenant's, or an unknown id, is a 404), and, when the response
// is to be stored, whether the store can take it now (a 503 before any
// generation when it knows it cannot) and whether the conversation so
// far already passes tenancy.MaxResponseBytes (a 400). A body that does
// not decode is left to decodeResponses to refuse.
func (s *Server) loadResponses(ctx context.Context, t *tenancy.Tenant, body []byte) (responseLoad, error) {
	var req struct {
		Store              *bool   `json:"store"`
		PreviousResponseID *string `json:"previous_response_id"`
	}
	var load responseLoad
	if json.Unmarshal(body, &req) != nil {
		return load, nil
	}
	store := req.Store == nil || *req.Store
	if store {
		if err := s.responses.ResponsesReady(); err != nil {
			return load, responseStoreError(err, "store", "so a response cannot be stored now; retry shortly, or send store: false")
		}
	}
	var prevBytes int
	if req.PreviousResponseID != nil {
		st, err := s.storedResponse(ctx, t.Name, *req.PreviousResponseID)
		if err != nil {
			return load, responseStoreError(err, "previous_response_id",
				"so previous_response_id cannot be read; retry shortly")
		}
		if err := json.Unmarshal(st.Conversation, &load.previous); err != nil {
			return load, fmt.Errorf("server: stored response %s: %w", st.ID, err)
		}
		prevBytes, load.previousID = len(st.Conversation), st.ID
	}
	if store && prevBytes+len(body) > tenancy.MaxResponseBytes {
		return load, tooLargeToStore(prevBytes + len(body))
	}
	return load, nil
}

// storedResponse is tenant's stored response id.
func (s *Server) storedResponse(ctx context.Context, tenant, id string) (tenancy.StoredResponse, error) {
	if !responseIDPattern.MatchString(id) {
		return tenancy.StoredResponse{}, tenancy.ErrNoResponse
	}
	return s.responses.GetResponse(ctx, tenant, id)
}

// storeResponse stores o, which ends the conversation items, for tenant.
func (s *Server) storeResponse(ctx context.Context, tenant string, o *responseObject, items []respItem) error {
	obj, err := json.Marshal(o)
	if err != nil {
		return err
	}
	conv, err := json.Marshal(items)
	if err != nil {
		return err
	}
	err = s.responses.PutResponse(ctx, tenant, tenancy.StoredResponse{ID: o.ID, Response: obj, Conversation: conv})
	return responseStoreError(err, "store", "so this response was generated but not stored; retry shortly, or send store: false")
}

// tooLargeToStore is the 400 for a response of at least n bytes, which
// cannot be stored.
func tooLargeToStore(n int) error {
	return &APIError{Status: http.StatusBadRequest, Type: typeInvalidRequest, Param: "store", Code: "response_too_large",
		Message: fmt.Sprintf("the response and its conversation come to at least %d bytes; a stored response holds at most %d: send store: false, or begin a new conversation",
			n, tenancy.MaxResponseBytes)}
}

// responseStoreError answers a response store's error: an unknown id
// (whoever holds it) is a 404 naming param, an unreachable store a 503
// whose message ends with consequence, a response too large a 400. The
// store's own message (a database's address, its driver's words) goes
// to the log only.
func responseStoreError(err error, param, consequence string) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, tenancy.ErrNoResponse):
		what := "response"
		if param == "previous_response_id" {
			what = "previous_response_id"
		}
		return &APIError{Status: http.StatusNotFound, Type: typeInvalidRequest, Param: param, Code: "response_not_found",
			Message: what + " is not a stored response of yours (or it has expired)"}
	case errors.Is(err, tenancy.ErrUnavailable):
		e := &APIError{Status: http.StatusServiceUnavailable, Type: typeServer, Code: "store_unavailable", Param: param,
			RetryAfter: time.Second, Message: "the response store is unavailable, " + consequence}
		return fmt.Errorf("%w (%w)", e, err) // the client gets e; the log line both
	case errors.Is(err, tenancy.ErrResponseTooLarge):
		return fmt.Errorf("%w (%w)", tooLargeToStore(tenancy.MaxResponseBytes+1), err)
	}
	return err
}
