package serving

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/engine"
	"github.com/realizar-host/realizar-host/engine/enginetest"
	"github.com/realizar-host/realizar-host/forward"
	"github.com/realizar-host/realizar-host/internal/fixturemodel"
	"github.com/realizar-host/realizar-host/tokenizer"
)

// The Core tests run a real forward: the server tests' fixture, a
// random-weight llama of one layer of width 64 over the 32,000-token
// llama vocabulary with a context of 256 positions, generated once per
// test binary (a few milliseconds per token).

// fixturePath is the generated model, shared by the package's tests.
var fixturePath string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "serving-fixture-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fixturePath = filepath.Join(dir, "serving-fixture.gguf")
	if err := fixturemodel.Generate(fixturePath, "serving-fixture"); err != nil {
		fmt.Fprintln(os.Stderr, "generate fixture:", err)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// loadModel opens the fixture as a Model; lone leaves NewForward unset
// (one forward, whose slot passes from tenant to tenant).
func loadModel(t *testing.T, lone bool) Model {
	t.Helper()
	l := fixturemodel.Open(t, fixturePath)
	fwd, err := l.NewForward()
	require.NoError(t, err)
	m := Model{Forward: fwd, NewForward: l.NewForward, KVBytesPerPosition: l.Model.KVBytesPerPosition(),
		Vocab: l.Tokenizer.Renderer(tokenizer.RenderOptions{})}
	if lone {
		m.NewForward = nil
	}
	return m
}

// newCore starts a Core over the fixture, closed when the test ends.
func newCore(t *testing.T, m Model, cfg Config) *Core {
	t.Helper()
	c, err := New(m, cfg)
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c
}

// prompt is a short prompt: BOS and a few ids.
var prompt = []int32{1, 100, 200, 300}

// request is a turn of n greedy tokens past end-of-generation.
func request(n int, sampler engine.Sampler) Request {
	if sampler == nil {
		sampler = enginetest.Greedy{}
	}
	return Request{Prompt: prompt, MaxTokens: n,
		Generate: engine.GenerateConfig{Sampler: sampler, IgnoreEOG: true}}
}

// start admits tenant and starts req.
func start(t *testing.T, c *Core, tenant string, req Request) *Turn {
	t.Helper()
	tk, err := c.Admit(tenant)
	require.NoError(t, err)
	turn, err := tk.Start(context.Background(), req)
	require.NoError(t, err)
	return turn
}

// ended waits for turn's end and returns its Result.
func ended(t *testing.T, turn *Turn) (Result, error) {
	t.Helper()
	select {
	case <-turn.Done():
	case <-time.After(time.Minute):
		t.Fatal("the turn did not end")
	}
	return turn.Result()
}

// drain reads everything a turn buffered.
func drain(turn *Turn) (text []byte, logprobs int) {
	var buf []Event
	for {
		events, more := turn.Next(buf[:0])
		for _, e := range events {
			text = append(text, e.Text...)
			if e.Logprobs != nil {
				logprobs++
			}
		}
		if !more {
			return text, logprobs
		}
		buf = events
	}
}

// gate is a greedy sampler that chooses its first token at once and each
// later one only once the gate opens: a turn that stays running.
type gate struct {
	open    chan struct{}
	sampled chan struct{} // closed at the first Sample
	once    sync.Once
	n       int
}

func newGate() *gate { return &gate{open: make(chan struct{}), sampled: make(chan struct{})} }

func (g *gate) Reset(uint64, []int32) error { return nil }
func (g *gate) Accept(int32)                {}
func (g *gate) Sample(logits []float32) (int32, error) {
	if g.n++; g.n > 1 {
		<-g.open
	}
	g.once.Do(func() { close(g.sampled) })
	return enginetest.Greedy{}.Sample(logits)
}

// waitSampled waits for g's first token.
func (g *gate) waitSampled(t *testing.T) {
	t.Helper()
	select {
	case <-g.sampled:
	case <-time.After(time.Minute):
		t.Fatal("the turn never sampled")
	}
}

// TestTurnBuffered: a streamed turn's output waits in its buffer for a
// reader that reads nothing until the turn has ended (generation never
// waits for it), and what it then reads is the turn's text and every
// step's logprobs; a turn that does not stream buffers nothing.
func TestTurnBuffered(t *testing.T) {
	c := newCore(t, loadModel(t, false), Config{Parallel: 2})
	const n = 24
	req := request(n, nil)
	req.Stream, req.Generate.Logprobs = true, true
	turn := start(t, c, "a", req)
	res, err := ended(t, turn)
	require.NoError(t, err)
	assert.Equal(t, n, res.Turn.Generated)
	assert.Equal(t, engine.StopMaxTokens, res.Turn.Stop)
	require.NotEmpty(t, res.Turn.Text)
	assert.Equal(t, 0, c.Held("a"), "the place freed before the reader read")

	text, logprobs := drain(turn)
	assert.Equal(t, string(res.Turn.Text), string(text))
	assert.Equal(t, n, logprobs)
	events, more := turn.Next(nil)
	assert.Empty(t, events)
	assert.False(t, more)

	req.Stream = false
	quiet := start(t, c, "a", req)
	res2, err := ended(t, quiet)
	require.NoError(t, err)
	assert.Equal(t, res.Turn.Text, res2.Turn.Text, "greedy: the same turn")
	events, more = quiet.Next(nil)
	assert.Empty(t, events)
	assert.False(t, more)
}

// TestTurnCancel: Cancel on a running turn ends it with an error wrapping
// the cause; its place frees, and its KV bytes are its idle slot's.
func TestTurnCancel(t *testing.T) {
	m := loadModel(t, false)
	c := newCore(t, m, Config{Parallel: 2})
	g := newGate()
	req := request(200, g)
	req.Stream = true
	turn := start(t, c, "a", req)
	first, more := turn.Next(nil) // the first token's text: the second waits at the gate
	require.True(t, more)
	require.NotEmpty(t, first)
	assert.Equal(t, 1, c.Held("a"))

	cause := errors.New("client gone")
	turn.Cancel(cause)
	close(g.open)
	res, err := ended(t, turn)
	require.ErrorIs(t, err, cause)
	require.ErrorIs(t, err, engine.ErrCancelled)
	assert.Equal(t, engine.StopCancelled, res.Turn.Stop)
	assert.Less(t, res.Turn.Generated, 200)
	assert.Equal(t, 0, c.Held("a"))
	assert.Equal(t, 0, c.Queued())
	assert.Equal(t, int64(len(prompt)+200)*m.KVBytesPerPosition, c.KVUsed(), "the idle slot's bytes")
	assert.Equal(t, 1.0, testutil.ToFloat64(c.m.Cancelled))

	// The stream ends at the cancellation; the Result may hold text the
	// turn released after it.
	var text []byte
	for _, e := range first {
		text = append(text, e.Text...)
	}
	rest, _ := drain(turn)
	text = append(text, rest...)
	assert.NotEmpty(t, text)
	assert.True(t, strings.HasPrefix(string(res.Turn.Text), string(text)), "%q is not a prefix of %q", text, res.Turn.Text)
}

// TestTurnCancelWaiting: a turn cancelled while it waits for a place ends
// with the cause and gives its queue entry back.
func TestTurnCancelWaiting(t *testing.T) {
	c := newCore(t, loadModel(t, false), Config{Parallel: 1, Queue: 1})
	g := newGate()
	running := start(t, c, "a", request(8, g))
	g.waitSampled(t)

	waiting := start(t, c, "b", request(8, nil))
	require.Eventually(t, func() bool { return c.Queued() == 1 }, time.Minute, time.Millisecond)
	_, err := c.Admit("c")
	var r *Refused
	require.ErrorAs(t, err, &r, "the queue of one holds b's turn")

	cause := errors.New("client gone")
	waiting.Cancel(cause)
	res, err := ended(t, waiting)
	require.ErrorIs(t, err, cause)
	assert.Zero(t, res.Turn.Generated)
	assert.Equal(t, 0, c.Queued())
	tk, err := c.Admit("c")
	require.NoError(t, err, "b's entry was given back")
	tk.Release()

	close(g.open)
	_, err = ended(t, running)
	require.NoError(t, err)
}

// TestCoreKV: under Config.KVMemory, a turn that does not fit beside the
// running ones waits although a place is free, and runs once they end,
// evicting (and closing) the idle slot it needs the bytes of; one that can
// never fit is *TooLarge at Start and gives its entry back.
func TestCoreKV(t *testing.T) {
	m := loadModel(t, false)
	per := m.KVBytesPerPosition
	c := newCore(t, m, Config{Parallel: 2, Queue: 2, KVMemory: 30 * per})

	tk, err := c.Admit("a")
	require.NoError(t, err)
	_, err = tk.Start(context.Background(), request(40, nil))
	var tl *TooLarge
	require.ErrorAs(t, err, &tl)
	assert.Equal(t, len(prompt)+40, tl.Positions)
	assert.Equal(t, int64(tl.Positions)*per, tl.Need)
	assert.Equal(t, 30*per, tl.Share)
	_, err = tk.Start(context.Background(), request(8, nil))
	require.Error(t, err, "a ticket starts once")

	g := newGate()
	a := start(t, c, "a", request(16, g)) // 20 positions of the 30
	g.waitSampled(t)
	b := start(t, c, "b", request(16, nil))
	require.Eventually(t, func() bool { return c.Queued() == 1 }, time.Minute, time.Millisecond)
	assert.Equal(t, 0, c.Held("b"), "b waits for KV with a place free")
	assert.Equal(t, 20*per, c.KVUsed())

	close(g.open)
	_, err = ended(t, a)
	require.NoError(t, err)
	res, err := ended(t, b)
	require.NoError(t, err)
	assert.Equal(t, 16, res.Turn.Generated)
	assert.Equal(t, 20*per, c.KVUsed(), "a's idle slot was evicted for b's")
	assert.Equal(t, 0, c.Queued())
	c.sched.mu.Lock()
	assert.Len(t, c.sched.idle, 1)
	assert.Equal(t, "b", c.sched.idle[0].tenant)
	c.sched.mu.Unlock()
}

// TestStartErrors: a prompt that fills the context is an error at Start
// that gives the entry back; Release after Start does nothing.
func TestStartErrors(t *testing.T) {
	c := newCore(t, loadModel(t, false), Config{Parallel: 1, Queue: 1})
	tk, err := c.Admit("a")
	require.NoError(t, err)
	long := make([]int32, 256)
	_, err = tk.Start(context.Background(), Request{Prompt: long, MaxTokens: 1,
		Generate: engine.GenerateConfig{Sampler: enginetest.Greedy{}}})
	require.ErrorIs(t, err, ErrPromptTooLong)
	require.ErrorIs(t, err, forward.ErrContextExceeded)
	tk.Release() // after Start: nothing

	turn := start(t, c, "a", request(4, nil))
	_, err = ended(t, turn)
	require.NoError(t, err)
	tk, err = c.Admit("a")
	require.NoError(t, err, "every entry was given back")
	tk.Release()
	tk.Release() // a second time: nothing
	tk, err = c.Admit("a")
	require.NoError(t, err)
	_, err = c.Admit("b")
	var r *Refused
	require.ErrorAs(t, err, &r, "the queue of one is full: no entry was given back twice")
	tk.Release()
}

// TestCoreLone: over one forward, tenants take turns on its slot, and a
// tenant never reuses the prefix another left in it; its own it does.
func TestCoreLone(t *testing.T) {
	c := newCore(t, loadModel(t, true), Config{})
	assert.Equal(t, 1, c.Parallel())
	run := func(tenant string) engine.Turn {
		req := request(16, nil)
		req.CachePrompt = true
		res, err := ended(t, start(t, c, tenant, req))
		require.NoError(t, err)
		return res.Turn
	}
	a := run("a")
	b := run("b")
	assert.Zero(t, b.Reused, "b's turn reused a's tokens")
	assert.Equal(t, a.Text, b.Text)
	b2 := run("b")
	assert.Positive(t, b2.Reused, "b's own prefix")
}

// TestCoreConcurrent: tenants' turns started together, over fewer places
// than turns and a KV budget of three turns, all end with their streams
// equal to their texts, and leave no place, entry or KV byte but the idle
// slots' behind.
func TestCoreConcurrent(t *testing.T) {
	m := loadModel(t, false)
	per := m.KVBytesPerPosition
	c := newCore(t, m, Config{Parallel: 3, Queue: 16, Slots: 2, KVMemory: 3 * 12 * per,
		Shares: func(tenant string) Shares {
			if tenant == "a" {
				return Shares{Places: 1}
			}
			return Shares{}
		}})
	var wg sync.WaitGroup
	for _, tenant := range []string{"a", "b", "c"} {
		for i := range 3 {
			req := request(8, nil) // 12 positions
			req.Stream = true
			turn := start(t, c, tenant, req)
			wg.Add(1)
			go func() {
				defer wg.Done()
				if i%2 == 1 {
					<-turn.Done() // read nothing until the end
				}
				text, _ := drain(turn)
				res, err := turn.Result()
				if assert.NoError(t, err) {
					assert.Equal(t, 8, res.Turn.Generated)
					assert.Equal(t, string(res.Turn.Text), string(text))
				}
			}()
		}
	}
	wg.Wait()
	for _, tenant := range []string{"a", "b", "c"} {
		assert.Equal(t, 0, c.Held(tenant))
	}
	assert.Equal(t, 0, c.Queued())
	c.sched.mu.Lock()
	defer c.sched.mu.Unlock()
	assert.Equal(t, 0, c.sched.entries)
	assert.LessOrEqual(t, len(c.sched.idle), 2)
	var idle int64
	for _, sl := range c.sched.idle {
		idle += int64(sl.positions) * per
	}
	assert.Equal(t, idle, c.sched.kvUsed)
}
