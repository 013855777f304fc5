package tenancy

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func stored(id string) StoredResponse {
	return StoredResponse{ID: id, Response: []byte(`{"id":"` + id + `"}`), Conversation: []byte(`[]`)}
}

// TestMemResponses: a tenant keeps at most ResponsesPerTenant responses,
// each for ResponseTTL, MaxResponseBytes each, and sees only its own.
func TestMemResponses(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1000, 0)
	st := newMemResponsesAt(func() time.Time { return now })
	for i := range ResponsesPerTenant + 1 {
		require.NoError(t, st.PutResponse(ctx, "a", stored(fmt.Sprint(i))))
	}
	require.NoError(t, st.PutResponse(ctx, "b", stored("b0")))
	for _, tc := range []struct {
		tenant, id string
		kept       bool
		why        string
	}{
		{"a", "0", false, "the oldest past the bound is dropped"},
		{"a", "1", true, "the next oldest is kept"},
		{"a", fmt.Sprint(ResponsesPerTenant), true, "the newest is kept"},
		{"b", "b0", true, "another tenant's bound is its own"},
		{"b", "1", false, "another tenant's id is not found"},
		{"a", "b0", false, "another tenant's id is not found"},
		{"c", "1", false, "a tenant with none"},
	} {
		r, err := st.GetResponse(ctx, tc.tenant, tc.id)
		if tc.kept {
			require.NoError(t, err, tc.why)
			assert.Equal(t, stored(tc.id), r, tc.why)
		} else {
			assert.ErrorIs(t, err, ErrNoResponse, tc.why)
			assert.Empty(t, r.Response, tc.why)
		}
	}
	assert.ErrorIs(t, st.DeleteResponse(ctx, "b", "1"), ErrNoResponse, "another tenant's delete")
	require.NoError(t, st.DeleteResponse(ctx, "a", "1"))
	assert.ErrorIs(t, st.DeleteResponse(ctx, "a", "1"), ErrNoResponse, "deleted already")
	_, err := st.GetResponse(ctx, "a", "1")
	assert.ErrorIs(t, err, ErrNoResponse)

	now = now.Add(ResponseTTL + time.Second)
	_, err = st.GetResponse(ctx, "a", "2")
	assert.ErrorIs(t, err, ErrNoResponse, "expired")
	assert.ErrorIs(t, st.DeleteResponse(ctx, "a", "3"), ErrNoResponse, "expired")
	require.NoError(t, st.PutResponse(ctx, "a", stored("new")))
	assert.Equal(t, 1, st.tenants["a"].order.Len(), "expired ones leave at the next put")
	assert.NoError(t, st.ResponsesReady())
}

func TestMemResponsesSize(t *testing.T) {
	ctx := context.Background()
	st := NewMemResponses()
	half := MaxResponseBytes / 2
	for _, tc := range []struct {
		resp, conv int
		err        error
	}{
		{half, MaxResponseBytes - half, nil},
		{half, MaxResponseBytes - half + 1, ErrResponseTooLarge},
		{MaxResponseBytes + 1, 0, ErrResponseTooLarge},
	} {
		r := StoredResponse{ID: fmt.Sprint(tc.resp, tc.conv), Response: []byte(strings.Repeat("x", tc.resp)),
			Conversation: []byte(strings.Repeat("y", tc.conv))}
		err := st.PutResponse(ctx, "a", r)
		if tc.err != nil {
			assert.ErrorIs(t, err, tc.err)
			_, err = st.GetResponse(ctx, "a", r.ID)
			assert.ErrorIs(t, err, ErrNoResponse, "nothing stored")
		} else {
			assert.NoError(t, err)
		}
	}
}
