package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/realizar-host/realizar-host/internal/tenancy"
)

// The page sizes of GET /v1/responses/{id}/input_items (OpenAI's).
const (
	defaultInputItems = 20
	maxInputItems     = 100
)

// inputItem is an item of a stored response's input as OpenAI lists it:
// a message (Role, Content of one input_text part, output_text for the
// assistant's), a function_call or a function_call_output.
type inputItem struct {
	Type      string         `json:"type"`
	ID        string         `json:"id"`
	Status    string         `json:"status"`
	Role      string         `json:"role,omitempty"`
	Content   *[]respContent `json:"content,omitempty"`
	CallID    string         `json:"call_id,omitempty"`
	Name      string         `json:"name,omitempty"`
	Arguments *string        `json:"arguments,omitempty"`
	Output    *string        `json:"output,omitempty"`
}

// inputItemList is the list's page: OpenAI's cursor page.
type inputItemList struct {
	Object  string      `json:"object"`
	Data    []inputItem `json:"data"`
	FirstID *string     `json:"first_id"`
	LastID  *string     `json:"last_id"`
	HasMore bool        `json:"has_more"`
}

// handleInputItems is GET /v1/responses/{id}/input_items: the items the
// stored response was generated from — the conversation of its
// previous_response_id chain and its own input, not its output — a page
// of limit (1 to 100, default 20) in order ("desc", the default, newest
// first, or "asc") after the item whose id is after. Item ids are the
// response's id and the item's place, so pages are stable. Another
// tenant's response, or an unknown one, is a 404.
func (s *Server) handleInputItems(w http.ResponseWriter, r *http.Request, t *tenancy.Tenant) error {
	q := r.URL.Query()
	limit := defaultInputItems
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxInputItems {
			return badRequest("limit", "limit %q must be an integer in [1, %d]", v, maxInputItems)
		}
		limit = n
	}
	order := q.Get("order")
	switch order {
	case "":
		order = "desc"
	case "asc", "desc":
	default:
		return badRequest("order", "order %q must be asc or desc", order)
	}
	st, err := s.storedResponse(r.Context(), t.Name, r.PathValue("id"))
	if err != nil {
		return responseStoreError(err, "", "so stored responses cannot be read now; retry shortly")
	}
	items, err := inputItemsOf(st)
	if err != nil {
		return err
	}
	if order == "desc" {
		slices.Reverse(items)
	}
	if after := q.Get("after"); after != "" {
		i := slices.IndexFunc(items, func(it inputItem) bool { return it.ID == after })
		if i < 0 {
			return badRequest("after", "after %q is not an input item of this response", after)
		}
		items = items[i+1:]
	}
	page := inputItemList{Object: "list", Data: items[:min(limit, len(items))], HasMore: len(items) > limit}
	if n := len(page.Data); n > 0 {
		page.FirstID, page.LastID = &page.Data[0].ID, &page.Data[n-1].ID
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}

// inputItemsOf are st's input items, oldest first: its stored
// conversation without the items its output added (a message and each
// function_call; reasoning is not part of the conversation).
func inputItemsOf(st tenancy.StoredResponse) ([]inputItem, error) {
	var conv []respItem
	var o struct {
		Output []respOutput `json:"output"`
	}
	if err := json.Unmarshal(st.Conversation, &conv); err != nil {
		return nil, fmt.Errorf("server: stored response %s: %w", st.ID, err)
	}
	if err := json.Unmarshal(st.Response, &o); err != nil {
		return nil, fmt.Errorf("server: stored response %s: %w", st.ID, err)
	}
	out := 0
	for _, it := range o.Output {
		if it.Type == "message" || it.Type == "function_call" {
			out++
		}
	}
	conv = conv[:max(0, len(conv)-out)]
	base := strings.TrimPrefix(st.ID, "resp_")
	items := make([]inputItem, len(conv))
	for i, c := range conv {
		it := inputItem{Type: c.Type, Status: "completed"}
		switch c.Type {
		case "message":
			it.ID, it.Role = fmt.Sprintf("msg_%s%04d", base, i), c.Role
			part := respContent{Type: "input_text", Text: c.Text}
			if c.Role == "assistant" {
				part = outputText(c.Text)
			}
			it.Content = &[]respContent{part}
		case "function_call":
			it.ID, it.CallID, it.Name, it.Arguments = fmt.Sprintf("fc_%s%04d", base, i), c.CallID, c.Name, ptr(c.Arguments)
		case "function_call_output":
			it.ID, it.CallID, it.Output = fmt.Sprintf("fco_%s%04d", base, i), c.CallID, ptr(c.Output)
		}
		items[i] = it
	}
	return items, nil
}
