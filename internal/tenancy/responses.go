package tenancy

import (
	"container/list"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Retention and size of stored responses (OpenAI's Responses API with
// store), the same for every ResponseStore: a tenant keeps at most
// ResponsesPerTenant, each for at most ResponseTTL, the oldest dropped
// first, and one stored response (its Response and Conversation
// together) is at most MaxResponseBytes. A store holds at most
// ResponsesPerTenant × MaxResponseBytes (1 GiB) per tenant.
const (
	ResponsesPerTenant = 256
	ResponseTTL        = time.Hour
	MaxResponseBytes   = 4 << 20
)

// ErrNoResponse is a ResponseStore's answer for an id the tenant has not
// stored, has deleted, or that expired — whether or not another tenant
// has a response of that id.
var ErrNoResponse = errors.New("tenancy: no such stored response")

// ErrResponseTooLarge is a ResponseStore's answer for a response over
// MaxResponseBytes; nothing is stored.
var ErrResponseTooLarge = errors.New("tenancy: stored response too large")

// StoredResponse is a response as a ResponseStore keeps it: opaque JSON
// the server writes and reads back.
type StoredResponse struct {
	// ID is the response's id (resp_ and 24 hex digits, chosen by the
	// server; unguessable).
	ID string
	// Response is the Response object as GET /v1/responses/{id} returns it.
	Response json.RawMessage
	// Conversation is the conversation the response ends (its input and
	// output items), which previous_response_id continues.
	Conversation json.RawMessage
}

// Bytes is r's size as MaxResponseBytes counts it.
func (r StoredResponse) Bytes() int { return len(r.Response) + len(r.Conversation) }

// CheckSize is ErrResponseTooLarge, with r's size, when r is over
// MaxResponseBytes.
func (r StoredResponse) CheckSize() error {
	if n := r.Bytes(); n > MaxResponseBytes {
		return fmt.Errorf("%w: %d bytes, over %d", ErrResponseTooLarge, n, MaxResponseBytes)
	}
	return nil
}

// ResponseStore keeps tenants' stored responses, one namespace per
// tenant, within the retention above: in memory for one server
// (MemResponses), in a database for replicas (server/pgstore). A tenant
// never reads, deletes or learns of another's responses: every method
// takes the tenant, and another tenant's id is ErrNoResponse.
//
// Implementations are safe for concurrent use. An error wrapping
// ErrUnavailable means the service behind the store cannot be reached.
type ResponseStore interface {
	// PutResponse stores r for tenant, dropping tenant's expired
	// responses and, past ResponsesPerTenant, its oldest. Errors:
	// ErrResponseTooLarge, ErrUnavailable.
	PutResponse(ctx context.Context, tenant string, r StoredResponse) error
	// GetResponse is tenant's response id while it is kept; ErrNoResponse
	// otherwise.
	GetResponse(ctx context.Context, tenant, id string) (StoredResponse, error)
	// DeleteResponse removes tenant's response id; ErrNoResponse when
	// tenant has none kept of that id.
	DeleteResponse(ctx context.Context, tenant, id string) error
	// ResponsesReady is nil unless the store knows a PutResponse would
	// fail now (an error wrapping ErrUnavailable): the server asks it
	// before generating a response it is to store.
	ResponsesReady() error
}

// MemResponses is a ResponseStore in memory, for one server: what it
// holds is lost with the process. Expiry is lazy: an expired response
// is never returned, and leaves memory at its tenant's next put.
type MemResponses struct {
	mu      sync.Mutex
	now     func() time.Time
	tenants map[string]*memTenantResponses
}

type memTenantResponses struct {
	order *list.List // of *memResponse, oldest first
	byID  map[string]*list.Element
}

type memResponse struct {
	r  StoredResponse
	at time.Time
}

// NewMemResponses returns an empty MemResponses on the wall clock.
func NewMemResponses() *MemResponses { return newMemResponsesAt(time.Now) }

// newMemResponsesAt returns an empty MemResponses on the clock now (for
// tests of expiry).
func newMemResponsesAt(now func() time.Time) *MemResponses {
	return &MemResponses{now: now, tenants: map[string]*memTenantResponses{}}
}

// PutResponse implements ResponseStore.
func (s *MemResponses) PutResponse(_ context.Context, tenant string, r StoredResponse) error {
	if err := r.CheckSize(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	tr := s.tenants[tenant]
	if tr == nil {
		tr = &memTenantResponses{order: list.New(), byID: map[string]*list.Element{}}
		s.tenants[tenant] = tr
	}
	if e, ok := tr.byID[r.ID]; ok { // the same id again replaces it
		tr.order.Remove(e)
	}
	tr.byID[r.ID] = tr.order.PushBack(&memResponse{r: r, at: s.now()})
	for e := tr.order.Front(); e != nil && (tr.order.Len() > ResponsesPerTenant || s.expired(e.Value.(*memResponse))); e = tr.order.Front() {
		delete(tr.byID, tr.order.Remove(e).(*memResponse).r.ID)
	}
	return nil
}

func (s *MemResponses) expired(r *memResponse) bool { return s.now().Sub(r.at) > ResponseTTL }

// GetResponse implements ResponseStore.
func (s *MemResponses) GetResponse(_ context.Context, tenant, id string) (StoredResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if tr := s.tenants[tenant]; tr != nil {
		if e, ok := tr.byID[id]; ok && !s.expired(e.Value.(*memResponse)) {
			return e.Value.(*memResponse).r, nil
		}
	}
	return StoredResponse{}, ErrNoResponse
}

// DeleteResponse implements ResponseStore.
func (s *MemResponses) DeleteResponse(_ context.Context, tenant, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if tr := s.tenants[tenant]; tr != nil {
		if e, ok := tr.byID[id]; ok {
			tr.order.Remove(e)
			delete(tr.byID, id)
			if !s.expired(e.Value.(*memResponse)) {
				return nil
			}
		}
	}
	return ErrNoResponse
}

// ResponsesReady implements ResponseStore: memory is always ready.
func (s *MemResponses) ResponsesReady() error { return nil }
