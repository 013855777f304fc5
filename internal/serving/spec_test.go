package serving

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/engine"
	"github.com/realizar-host/realizar-host/forward"
	"github.com/realizar-host/realizar-host/internal/draft"
	"github.com/realizar-host/realizar-host/internal/fixturemodel"
)

// TestCoreSpeculative: turns with a drafter decode in the shared passes
// beside plain turns, their verify spans cut to what --batch-tokens has
// room for, and each comes out as the same turn without drafts (ids,
// text, logprobs, stop); the drafts are counted in the metrics and the
// passes. Over the lone forward (no batched pass) too.
func TestCoreSpeculative(t *testing.T) {
	const n = 40
	exact := func(plain engine.Turn) engine.Drafter {
		return draft.NewPrediction(plain.GeneratedTokens(), draft.PredictionOptions{})
	}
	lookup := func(engine.Turn) engine.Drafter { return draft.NewLookup(draft.LookupOptions{}) }
	tests := []struct {
		name        string
		lone        bool
		batchTokens int
	}{
		{"batched", false, 0},
		{"batched, drafts cut by --batch-tokens 6", false, 6},
		{"lone forward", true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var drafts atomic.Int64
			m := loadModel(t, tt.lone)
			c := newCore(t, m, Config{Parallel: 4, BatchTokens: tt.batchTokens, OnPass: func(p PassStats) { drafts.Add(int64(p.Drafts)) }})
			req := request(n, nil)
			req.Generate.TopLogprobs = 2
			res, err := ended(t, start(t, c, "plain", req))
			require.NoError(t, err)
			plain := res.Turn
			// Started together, so that they share passes; awaited in
			// order (each within ended's bound after the one before).
			makers := []func(engine.Turn) engine.Drafter{nil, exact, lookup, exact}
			turns := make([]*Turn, len(makers))
			for i, mk := range makers {
				r := req
				if mk != nil {
					r.Generate.Draft = mk(plain)
				}
				turns[i] = start(t, c, "t", r)
			}
			for i, turn := range turns {
				res, err := ended(t, turn)
				require.NoError(t, err, "turn %d", i)
				got := res.Turn
				assert.Equal(t, plain.GeneratedTokens(), got.GeneratedTokens(), "turn %d", i)
				assert.Equal(t, string(plain.Text), string(got.Text), "turn %d", i)
				assert.Equal(t, plain.Logprobs, got.Logprobs, "turn %d", i)
				assert.Equal(t, plain.Stop, got.Stop, "turn %d", i)
				if i == 1 || i == 3 {
					assert.Positive(t, got.Drafts.Accepted, "turn %d: an exact prediction", i)
					assert.Equal(t, got.Drafts.Drafted, got.Drafts.Accepted, "turn %d", i)
				}
			}
			assert.Positive(t, testutil.ToFloat64(c.m.AcceptedDraftTokens.WithLabelValues("t")))
			assert.GreaterOrEqual(t, testutil.ToFloat64(c.m.DraftTokens.WithLabelValues("t")), testutil.ToFloat64(c.m.AcceptedDraftTokens.WithLabelValues("t")))
			if !tt.lone {
				assert.Positive(t, drafts.Load(), "draft rows in the passes")
			}
		})
	}
}

// constSampler always chooses id.
type constSampler struct{ id int32 }

func (constSampler) Reset(uint64, []int32) error       { return nil }
func (s constSampler) Sample([]float32) (int32, error) { return s.id, nil }
func (constSampler) Accept(int32)                      {}

// missDrafter drafts n tokens of id, whatever the turn.
type missDrafter struct {
	id int32
	n  int
}

func (missDrafter) Reset([]int32) {}
func (d missDrafter) Draft(dst, _ []int32, limit int) []int32 {
	for range min(d.n, limit) {
		dst = append(dst, d.id)
	}
	return dst
}
func (missDrafter) Accepted(int, int) {}

// TestDraftGateOnPath: once the gate has measured the passes and the core's
// drafts, sequences decoding together whose drafts are always rejected
// draft no more than their first span each, however short their turns; a
// lone sequence still drafts.
func TestDraftGateOnPath(t *testing.T) {
	const drafted, turns = 4, 7
	var drafts atomic.Int64
	c := newCore(t, loadModel(t, false), Config{Parallel: turns + 1, OnPass: func(p PassStats) { drafts.Add(int64(p.Drafts)) }})
	round := func() []Result {
		// A plain turn that outlasts the others keeps two or more
		// sequences decoding while they run.
		long := request(400, constSampler{7})
		plain := start(t, c, "plain", long)
		var started []*Turn
		for range turns {
			req := request(32, constSampler{7})
			req.Generate.Draft = missDrafter{8, drafted}
			started = append(started, start(t, c, "t", req))
		}
		var out []Result
		for _, turn := range started {
			res, err := ended(t, turn)
			require.NoError(t, err)
			out = append(out, res)
		}
		_, err := ended(t, plain)
		require.NoError(t, err)
		return out
	}
	round() // the gate's warm-up
	drafts.Store(0)
	for i, res := range round() {
		assert.Equal(t, 32, res.Turn.Generated)
		assert.LessOrEqual(t, res.Turn.Drafts.Drafted, drafted, "turn %d drafts past its first span: %+v", i, res.Turn.Drafts)
		assert.Zero(t, res.Turn.Drafts.Accepted)
	}
	assert.LessOrEqual(t, drafts.Load(), int64(turns*drafted), "draft rows in the passes")

	// Alone, a sequence drafts whatever the pool says.
	req := request(16, constSampler{7})
	req.Generate.Draft = missDrafter{8, drafted}
	res, err := ended(t, start(t, c, "t", req))
	require.NoError(t, err)
	assert.Greater(t, res.Turn.Drafts.Drafted, drafted)
}

// peekDrafter is a missDrafter that peeks (engine.DraftPeeker): the token
// it would draft first is id.
type peekDrafter struct{ missDrafter }

func (d peekDrafter) Peek([]int32) (int32, bool) { return d.id, true }

// TestDraftGatePeeks: beside other sequences, a sequence whose drafter
// peeks drafts only once its peeks have measured its acceptance — one
// whose peeks all miss verifies hardly a draft (as a missDrafter's turns,
// whose 4-draft probes the gate cuts at a pool that accepted nothing,
// TestDraftGateOnPath) — while one whose peeks hit drafts, and every draft
// it verifies is accepted. That last is what peeks change: without them
// the hit turns' probes are judged by the same empty pool and cut, and
// they draft nothing.
func TestDraftGatePeeks(t *testing.T) {
	const turns = 7
	c := newCore(t, loadModel(t, false), Config{Parallel: turns + 1})
	round := func(id int32) []Result {
		long := request(400, constSampler{7})
		plain := start(t, c, "plain", long)
		var started []*Turn
		for range turns {
			req := request(32, constSampler{7})
			req.Generate.Draft = peekDrafter{missDrafter{id, 4}}
			started = append(started, start(t, c, "t", req))
		}
		var out []Result
		for _, turn := range started {
			res, err := ended(t, turn)
			require.NoError(t, err)
			assert.Equal(t, 32, res.Turn.Generated)
			out = append(out, res)
		}
		_, err := ended(t, plain)
		require.NoError(t, err)
		return out
	}
	round(8) // the gate's warm-up: its cost line measured
	missed := 0
	for i, res := range round(8) {
		assert.LessOrEqual(t, res.Turn.Drafts.Drafted, 4, "turn %d whose peeks all miss drafted past a span", i)
		missed += res.Turn.Drafts.Drafted
	}
	// A sequence that finds itself alone in a pass (the others' spans not
	// yet back) may draft a span; a missDrafter's turns draft one each.
	assert.LessOrEqual(t, missed, 2*4, "turns whose peeks all miss drafted")
	drafted := 0
	for _, res := range round(7) {
		assert.Equal(t, res.Turn.Drafts.Drafted, res.Turn.Drafts.Accepted)
		drafted += res.Turn.Drafts.Drafted
	}
	assert.Positive(t, drafted, "turns whose peeks hit drafted nothing")
}

// TestCoreKVDraft: a turn that drafts with a draft model (the fixture as
// its own: as many KV bytes per position as the target) is charged its
// draft cache's bytes beside its own, to the KV budget and its tenant's
// share, while it runs: a turn that fits alone is *TooLarge with them, one
// beside it waits although a place is free, and the bytes free at its end.
func TestCoreKVDraft(t *testing.T) {
	l := fixturemodel.Open(t, fixturePath)
	m := loadModel(t, false)
	per := m.KVBytesPerPosition
	dm, err := draft.NewModel(draft.ModelConfig{NewSequence: func() forward.Sequence { return l.Model.NewSequence() },
		ContextLength: l.Model.Config().ContextLength, EOG: l.Tokenizer.EOG(), KVBytesPerPosition: l.Model.KVBytesPerPosition()})
	require.NoError(t, err)
	c := newCore(t, m, Config{Parallel: 2, Queue: 2, KVMemory: 30 * per})
	drafted := func(n int, s engine.Sampler) Request {
		req := request(n, s)
		req.Generate.Draft = dm.Drafter(draft.ModelOptions{})
		return req
	}

	// 20 positions: 20 of the 30 alone, 40 with its draft model's.
	tk, err := c.Admit("a")
	require.NoError(t, err)
	_, err = tk.Start(context.Background(), drafted(16, nil))
	var tl *TooLarge
	require.ErrorAs(t, err, &tl)
	assert.Equal(t, 20, tl.Positions)
	assert.Equal(t, 40*per, tl.Need)
	assert.Equal(t, 20*per, tl.Draft)
	assert.Contains(t, tl.Error(), "of them the draft model's")

	g := newGate()
	a := start(t, c, "a", drafted(8, g)) // 12 positions and 12 of the draft's: 24 of the 30
	g.waitSampled(t)
	assert.Equal(t, 24*per, c.KVUsed())
	b := start(t, c, "b", request(8, nil)) // 12 more
	require.Eventually(t, func() bool { return c.Queued() == 1 }, time.Minute, time.Millisecond)
	assert.Equal(t, 0, c.Held("b"), "b waits for a's draft cache's bytes")

	close(g.open)
	res, err := ended(t, a)
	require.NoError(t, err)
	assert.Positive(t, res.Turn.Drafts.Drafted)
	_, err = ended(t, b)
	require.NoError(t, err)
	assert.Equal(t, 24*per, c.KVUsed(), "a's draft cache freed with its turn: the two idle slots")
}
