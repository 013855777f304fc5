package server

import (
	"container/list"
	"sync"
	"time"
)

// Retention of stored responses (POST /v1/responses with store): each
// tenant keeps at most storedResponsesPerTenant, each for at most
// storedResponseTTL, the oldest dropped first. A response holds its
// conversation (at most the context's prompt bytes, promptBytesPerPosition
// per position), so the memory is bounded per tenant by both.
const (
	storedResponsesPerTenant = 256
	storedResponseTTL        = time.Hour
)

// storedResponse is a stored Response and the conversation it ends
// (its input and output items), for previous_response_id.
type storedResponse struct {
	id     string
	object responseObject
	items  []respItem
	at     time.Time
}

// responseStore keeps stored responses in memory, per tenant: a tenant
// sees only its own (another's id is not found). Safe for concurrent use.
type responseStore struct {
	mu      sync.Mutex
	now     func() time.Time
	tenants map[string]*tenantResponses
}

type tenantResponses struct {
	order *list.List // of *storedResponse, oldest first
	byID  map[string]*list.Element
}

func newResponseStore() *responseStore {
	return &responseStore{now: time.Now, tenants: map[string]*tenantResponses{}}
}

// put stores r for tenant, dropping its expired responses and, past
// storedResponsesPerTenant, its oldest.
func (s *responseStore) put(tenant string, r *storedResponse) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r.at = s.now()
	tr := s.tenants[tenant]
	if tr == nil {
		tr = &tenantResponses{order: list.New(), byID: map[string]*list.Element{}}
		s.tenants[tenant] = tr
	}
	tr.byID[r.id] = tr.order.PushBack(r)
	for e := tr.order.Front(); e != nil && (tr.order.Len() > storedResponsesPerTenant || s.expired(e.Value.(*storedResponse))); e = tr.order.Front() {
		delete(tr.byID, tr.order.Remove(e).(*storedResponse).id)
	}
}

func (s *responseStore) expired(r *storedResponse) bool { return s.now().Sub(r.at) > storedResponseTTL }

// get is tenant's stored response id, if it is there and not expired.
func (s *responseStore) get(tenant, id string) (*storedResponse, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	tr := s.tenants[tenant]
	if tr == nil {
		return nil, false
	}
	e, ok := tr.byID[id]
	if !ok || s.expired(e.Value.(*storedResponse)) {
		return nil, false
	}
	return e.Value.(*storedResponse), true
}

// delete removes tenant's stored response id; false when it had none.
func (s *responseStore) delete(tenant, id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	tr := s.tenants[tenant]
	if tr == nil {
		return false
	}
	e, ok := tr.byID[id]
	if !ok {
		return false
	}
	tr.order.Remove(e)
	delete(tr.byID, id)
	return true
}
