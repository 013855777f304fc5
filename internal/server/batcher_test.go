package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/forward"
	"github.com/realizar-host/realizar-host/internal/draft"
	"github.com/realizar-host/realizar-host/internal/tenancy"
	"github.com/realizar-host/realizar-host/model"
)

// batchTenantsFile lets every tenant hold all 8 places.
func batchTenantsFile() []byte {
	return fmt.Appendf(nil, `{
  "defaults": {"step_deadline": "2s", "max_concurrent": 32, "requests_per_minute": 100000, "memory_pages": 64, "max_sequences": 8},
  "tenants": [
    {"name": "a", "key_sha256": [%q]},
    {"name": "b", "key_sha256": [%q]},
    {"name": "c", "key_sha256": [%q]}
  ]
}`, tenancy.HashKey(keyA), tenancy.HashKey(keyB), tenancy.HashKey(keyC))
}

// completion posts body for key and returns the response.
func completion(t *testing.T, s *testServer, key, body string) (int, completionResponse, []byte) {
	t.Helper()
	code, b := s.do(t, "POST", "/v1/completions", key, []byte(body))
	var r completionResponse
	if code == http.StatusOK {
		require.NoError(t, json.Unmarshal(b, &r), string(b))
	}
	return code, r, b
}

// passHistogram reads a histogram's sample count and sum.
func passHistogram(t *testing.T, s *testServer, get func(m *metrics) interface{ Write(*dto.Metric) error }) (uint64, float64) {
	var m dto.Metric
	require.NoError(t, get(s.srv.metrics).Write(&m))
	return m.GetHistogram().GetSampleCount(), m.GetHistogram().GetSampleSum()
}

// TestBatchSameTextAloneAndWithNeighbours: a request's greedy text is the
// same alone and decoding beside 7 neighbours of mixed prompt lengths and
// budgets, from three tenants; the passes did hold several sequences, and
// a long prompt went in chunks of at most --batch-tokens rows.
func TestBatchSameTextAloneAndWithNeighbours(t *testing.T) {
	for _, batchTokens := range []int{64, 5} {
		t.Run(fmt.Sprintf("batch-tokens %d", batchTokens), func(t *testing.T) {
			s := startServerConfig(t, batchTenantsFile(), Config{Parallel: 8, BatchTokens: batchTokens})
			keys := []string{keyA, keyB, keyC}
			bodies := make([]string, 8)
			for i := range bodies {
				prompt := strings.Repeat(fmt.Sprintf("Story %d, part %d. ", i, i), 1+3*(i%4))
				bodies[i] = fmt.Sprintf(`{"prompt": %q, "max_tokens": %d, "temperature": 0, "cache_prompt": false}`, prompt, 8+5*i)
			}
			alone := make([]string, len(bodies))
			for i, body := range bodies {
				code, r, b := completion(t, s, keys[i%3], body)
				require.Equal(t, http.StatusOK, code, string(b))
				alone[i] = r.Choices[0].Text
			}
			n0, _ := passHistogram(t, s, func(m *metrics) interface{ Write(*dto.Metric) error } { return m.PassSequences })
			together := make([]string, len(bodies))
			var wg sync.WaitGroup
			for i, body := range bodies {
				wg.Add(1)
				go func() {
					defer wg.Done()
					code, r, b := completion(t, s, keys[i%3], body)
					if assert.Equal(t, http.StatusOK, code, string(b)) {
						together[i] = r.Choices[0].Text
					}
				}()
			}
			wg.Wait()
			assert.Equal(t, alone, together)
			n, sum := passHistogram(t, s, func(m *metrics) interface{ Write(*dto.Metric) error } { return m.PassSequences })
			require.Greater(t, n, n0)
			t.Logf("passes: %d, %.2f sequences each on average", n, sum/float64(n))
			assert.Greater(t, sum/float64(n), 1.0, "no pass batched two sequences")
			var m dto.Metric
			require.NoError(t, s.srv.metrics.PassTokens.Write(&m))
			for _, bk := range m.GetHistogram().GetBucket() {
				if bk.GetUpperBound() < float64(batchTokens) {
					continue
				}
				assert.Equal(t, m.GetHistogram().GetSampleCount(), bk.GetCumulativeCount(),
					"a pass held more than %d token rows", batchTokens)
				break
			}
		})
	}
}

// TestBatchIgnoreEOS: llama.cpp's ignore_eos runs a turn past the
// end-of-generation token a logit bias forces.
func TestBatchIgnoreEOS(t *testing.T) {
	s := startServer(t, nil, 64)
	eos := s.model.Tokenizer.EOS()
	for _, ignore := range []bool{false, true} {
		body := fmt.Sprintf(`{"prompt": "Once", "max_tokens": 6, "logit_bias": {"%d": 100}, "ignore_eos": %v}`, eos, ignore)
		code, r, b := completion(t, s, "", body)
		require.Equal(t, http.StatusOK, code, string(b))
		if ignore {
			assert.Equal(t, 6, r.Usage.CompletionTokens)
			assert.Equal(t, "length", *r.Choices[0].FinishReason)
		} else {
			assert.Equal(t, 1, r.Usage.CompletionTokens)
			assert.Equal(t, "stop", *r.Choices[0].FinishReason)
		}
	}
}

// TestBatchKVBudget: a request that can never fit its tenant's share of
// the KV budget (half of it, with several tenants) is a 400 naming
// max_tokens; one that fits runs, many times over, the idle caches dropped
// to make room; a tenant's share can be set (max_kv_bytes).
func TestBatchKVBudget(t *testing.T) {
	perPos := loadModel(t).KVBytesPerPosition
	const budget = 320 // positions; the fixture's context is 256
	s := startServerConfig(t, batchTenantsFile(), Config{Parallel: 8, KVMemory: perPos * budget})

	for _, key := range []string{keyA, keyB, keyC, keyA} {
		code, _, b := completion(t, s, key, `{"prompt": "Once", "max_tokens": 140}`)
		require.Equal(t, http.StatusOK, code, string(b))
	}
	code, b := s.do(t, "POST", "/v1/completions", keyB, []byte(`{"prompt": "Once", "max_tokens": 170}`))
	require.Equal(t, http.StatusBadRequest, code, string(b), "over b's share of 160 positions")
	e := errorOf(t, b)
	assert.Equal(t, "max_tokens", e.Param)
	assert.Contains(t, e.Message, "your share")
	assert.LessOrEqual(t, s.srv.core.KVUsed(), perPos*budget)

	whole := bytes.Replace(batchTenantsFile(), []byte(`"max_sequences": 8`),
		fmt.Appendf(nil, `"max_sequences": 8, "max_kv_bytes": %d`, perPos*budget), 1)
	big := startServerConfig(t, whole, Config{Parallel: 8, KVMemory: perPos * budget})
	code, _, b = completion(t, big, keyB, `{"prompt": "Once", "max_tokens": 170}`)
	require.Equal(t, http.StatusOK, code, string(b), "a share of the whole budget")
}

// TestBatchKVBudgetDraftModel: a request drafting with the server's draft
// model (the fixture as its own: as many KV bytes per position) reserves
// its draft cache's bytes too, so one that fits its tenant's share alone
// is a 400 naming max_tokens and the draft model's part; without the
// draft model it runs.
func TestBatchKVBudgetDraftModel(t *testing.T) {
	perPos := loadModel(t).KVBytesPerPosition
	const budget = 320 // positions: b's share is 160
	s := startServerWith(t, batchTenantsFile(), Config{Parallel: 8, KVMemory: perPos * budget, DraftModel: true}, func(m *Model, mdl *model.Model) {
		dm, err := draft.NewModel(draft.ModelConfig{NewSequence: func() forward.Sequence { return mdl.NewSequence() },
			ContextLength: mdl.Config().ContextLength, EOG: m.Tokenizer.EOG(), KVBytesPerPosition: mdl.KVBytesPerPosition()})
		require.NoError(t, err)
		m.Draft = dm
	})
	code, b := s.do(t, "POST", "/v1/completions", keyB, []byte(`{"prompt": "Once", "max_tokens": 100}`))
	require.Equal(t, http.StatusBadRequest, code, string(b), "about 2 × 102 positions of b's 160")
	e := errorOf(t, b)
	assert.Equal(t, "max_tokens", e.Param)
	assert.Contains(t, e.Message, "of them the draft model's")
	code, _, b = completion(t, s, keyB, `{"prompt": "Once", "max_tokens": 100, "realizar": {"speculative": {"draft_model": false}}}`)
	require.Equal(t, http.StatusOK, code, string(b))
	code, r, b := completion(t, s, keyB, `{"prompt": "Once", "max_tokens": 40, "ignore_eos": true}`)
	require.Equal(t, http.StatusOK, code, string(b))
	assert.Equal(t, 40, r.Usage.CompletionTokens)
	assert.LessOrEqual(t, s.srv.core.KVUsed(), perPos*budget)
}

// closingSequence is a step with a Close (as a GPU sequence's, whose KV cache
// is device memory), counting its calls; it offers no Batch, so its
// spans run alone.
type closingSequence struct {
	forward.Sequence
	forward.Prefiller
	closed *atomic.Int32
}

func (c closingSequence) Close() error { c.closed.Add(1); return nil }

// An idle slot dropped beyond --slots closes its forward, so a step that
// holds memory outside the Go heap frees it then, not at exit.
func TestBatchEvictClosesForward(t *testing.T) {
	var made, closed atomic.Int32
	s := startServerWith(t, batchTenantsFile(), Config{Parallel: 2, Slots: 1}, func(m *Model, mdl *model.Model) {
		m.NewForward = func() (forward.ArchForward, error) {
			made.Add(1)
			st := mdl.NewSequence()
			return forward.NewSequenceForward(closingSequence{st, st, &closed},
				forward.Options{Arch: mdl.Config().Arch, ModelContext: mdl.Config().ContextLength})
		}
	})
	for _, key := range []string{keyA, keyB, keyC} {
		code, _, b := completion(t, s, key, `{"prompt": "Once", "max_tokens": 4}`)
		require.Equal(t, http.StatusOK, code, string(b))
	}
	assert.Equal(t, int32(3), made.Load(), "a slot per tenant")
	assert.Equal(t, int32(2), closed.Load(), "one idle slot kept, the two before it closed")
}

// TestContextStopReason: without max_tokens a turn runs until the context
// ends and says so (stop_reason "context", finish_reason "length"), as one
// whose max_tokens asks for more than fits does; a max_tokens that fits
// says "max-tokens".
func TestContextStopReason(t *testing.T) {
	s := startServer(t, nil, 64)
	for _, tc := range []struct{ body, stop string }{
		{`{"prompt": "Once", "ignore_eos": true}`, "context"},
		{`{"prompt": "Once", "ignore_eos": true, "max_tokens": 100000}`, "context"},
		{`{"prompt": "Once", "ignore_eos": true, "max_tokens": 5}`, "max-tokens"},
	} {
		code, r, b := completion(t, s, "", tc.body)
		require.Equal(t, http.StatusOK, code, string(b))
		require.NotNil(t, r.Realizar, string(b))
		assert.Equal(t, tc.stop, r.Realizar.StopReason, tc.body)
		assert.Equal(t, "length", *r.Choices[0].FinishReason, tc.body)
	}
}
