package model

import (
	"fmt"
	"math"

	"github.com/realizar-host/realizar-host/engine"
	"github.com/realizar-host/realizar-host/q4k"
)

// Step is one decoding state over a Model: its KV cache and scratch. It
// implements engine.TokenStep, engine.Prefiller, engine.Reserver and
// engine.BackendReporter. A Step is not safe for concurrent use; Steps of
// one Model may run concurrently.
type Step struct {
	m     *Model
	cache *kvCache
	held  int // positions 0..held-1 are in the cache
	acts  *actCache

	batch   int       // tokens the scratch below is sized for
	x       []float32 // [batch*Embd] residual stream
	xn      []float32 // [batch*Embd] normalized input of a sublayer
	q       []float32 // [batch*QDim]
	k, v    []float32 // [batch*KVDim]
	attn    []float32 // [batch*QDim] attention output
	proj    []float32 // [batch*Embd] output of attn_output / ffn_down
	gate    []float32 // [batch*FFN]
	up      []float32 // [batch*FFN]
	ropeCS  []float32 // [RopeDims] cos/sin table of one position
	logits  []float32 // [Vocab]
	scratch []attnScratch
	heads   headsTask // attention's loop body, reused
}

var (
	_ engine.TokenStep       = (*Step)(nil)
	_ engine.Prefiller       = (*Step)(nil)
	_ engine.Reserver        = (*Step)(nil)
	_ engine.BackendReporter = (*Step)(nil)
)

// NewStep returns an empty decoding state. Its KV cache starts empty and
// grows on demand (or to Reserve's size).
func (m *Model) NewStep() *Step {
	c := &m.cfg
	return &Step{
		m:       m,
		cache:   newKVCache(c.Layers, c.KVDim()),
		acts:    newActCache(),
		ropeCS:  make([]float32, c.RopeDims),
		logits:  make([]float32, c.Vocab),
		scratch: make([]attnScratch, m.pool.threads),
	}
}

// Reset forgets every held position; the cache's memory is kept.
func (s *Step) Reset() { s.held = 0 }

// Backend names the kernels in use ("cpu-avx2", "cpu-generic"); onGPU is
// always false.
func (s *Step) Backend() (name string, onGPU bool) { return "cpu-" + kernelName(), false }

// Reserve sizes the KV cache for positions positions (1 <= positions <=
// ContextLength), keeping what it holds: dropped is always false. It never
// shrinks the cache.
//
// Errors: engine.ErrContextExceeded when positions > ContextLength.
func (s *Step) Reserve(positions int) (dropped bool, err error) {
	if positions > s.m.cfg.ContextLength {
		return false, fmt.Errorf("model: reserve %d positions, context length %d: %w", positions, s.m.cfg.ContextLength, engine.ErrContextExceeded)
	}
	if positions < 1 {
		return false, fmt.Errorf("%w: reserve %d positions", ErrPosition, positions)
	}
	s.cache.grow(positions, s.held)
	return false, nil
}

// CacheBytes is the size of the KV cache in bytes at its current capacity.
func (s *Step) CacheBytes() int64 { return s.cache.bytes() }

// Step processes token at position and returns the logits after it,
// [Vocab]float32, valid until the next call. position may be at most the
// number of positions held: stepping an earlier position discards the ones
// after it.
//
// Errors: engine.ErrBadToken for a token outside [0, Vocab); ErrPosition for
// a gap; engine.ErrContextExceeded at position >= ContextLength.
func (s *Step) Step(token int32, position int) ([]float32, error) {
	if err := s.check([]int32{token}, position); err != nil {
		return nil, err
	}
	s.forward([]int32{token}, position)
	return s.logits, nil
}

// Prefill processes tokens[start:] (positions start..len(tokens)-1) in
// batched passes and returns the logits after the last token, as Step
// does. tokens[:start] must be held (start <= positions held).
//
// Each pass quantizes its tokens' activations once per matrix and reads each
// weight row once for the whole pass.
func (s *Step) Prefill(tokens []int32, start int) ([]float32, error) {
	if start < 0 || start >= len(tokens) {
		return nil, fmt.Errorf("%w: prefill from %d of %d tokens", ErrPosition, start, len(tokens))
	}
	if err := s.check(tokens[start:], start); err != nil {
		return nil, err
	}
	for lo := start; lo < len(tokens); lo += s.m.batchSize {
		s.forward(tokens[lo:min(lo+s.m.batchSize, len(tokens))], lo)
	}
	return s.logits, nil
}

// check validates a span of tokens at positions start.. and makes room.
func (s *Step) check(tokens []int32, start int) error {
	c := &s.m.cfg
	if start < 0 || start > s.held {
		return fmt.Errorf("%w: position %d with %d held", ErrPosition, start, s.held)
	}
	end := start + len(tokens)
	if end > c.ContextLength {
		return fmt.Errorf("model: position %d, context length %d: %w", end-1, c.ContextLength, engine.ErrContextExceeded)
	}
	for _, t := range tokens {
		if t < 0 || int(t) >= c.Vocab {
			return fmt.Errorf("model: token %d, vocabulary %d: %w", t, c.Vocab, engine.ErrBadToken)
		}
	}
	if end > s.cache.capacity {
		s.cache.grow(min(max(end, 2*s.cache.capacity, 256), c.ContextLength), s.held)
	}
	return nil
}

// ensureBatch sizes the scratch for n tokens.
func (s *Step) ensureBatch(n int) {
	if n <= s.batch {
		return
	}
	c := &s.m.cfg
	s.batch = n
	s.x = make([]float32, n*c.Embd)
	s.xn = make([]float32, n*c.Embd)
	s.q = make([]float32, n*c.QDim())
	s.k = make([]float32, n*c.KVDim())
	s.v = make([]float32, n*c.KVDim())
	s.attn = make([]float32, n*c.QDim())
	s.proj = make([]float32, n*c.Embd)
	s.gate = make([]float32, n*c.FFN)
	s.up = make([]float32, n*c.FFN)
}

// forward runs tokens (already checked) at positions start.. through the
// model, leaving the last token's logits in s.logits.
func (s *Step) forward(tokens []int32, start int) {
	m, c := s.m, &s.m.cfg
	n := len(tokens)
	s.ensureBatch(n)
	x := s.x[:n*c.Embd]
	for b, t := range tokens {
		// Checked at load: the embedding's rows decode.
		_ = q4k.Dequantize(m.embd.typ, x[b*c.Embd:(b+1)*c.Embd], m.embd.row(int(t)))
	}
	for l := range m.layers {
		s.block(l, n, start)
	}
	s.held = start + n

	last := x[(n-1)*c.Embd : n*c.Embd]
	xn := s.xn[:c.Embd]
	rmsNorm(xn, last, m.outNorm, c.RMSEps)
	s.acts.reset(xn, c.Embd, 1)
	matmul(m.pool, s.acts, matJob{w: &m.output, out: s.logits})
}

// block runs transformer block l over n tokens at positions start..:
//
//	x += Wo · attention(rope(Wq·norm(x)), rope(Wk·norm(x)), Wv·norm(x))
//	x += Wdown · (silu(Wgate·norm(x)) * Wup·norm(x))
func (s *Step) block(l, n, start int) {
	m, c := s.m, &s.m.cfg
	ly := &m.layers[l]
	embd, qDim, kvDim := c.Embd, c.QDim(), c.KVDim()
	x, xn := s.x[:n*embd], s.xn[:n*embd]
	q, k, v := s.q[:n*qDim], s.k[:n*kvDim], s.v[:n*kvDim]

	// Attention.
	for b := range n {
		rmsNorm(xn[b*embd:(b+1)*embd], x[b*embd:(b+1)*embd], ly.attnNorm, c.RMSEps)
	}
	s.acts.reset(xn, embd, n)
	matmul(m.pool, s.acts, matJob{&ly.q, q}, matJob{&ly.k, k}, matJob{&ly.v, v})
	for b := range n {
		m.rope.table(s.ropeCS, start+b)
		m.rope.apply(q[b*qDim:(b+1)*qDim], c.HeadDim, s.ropeCS)
		m.rope.apply(k[b*kvDim:(b+1)*kvDim], c.HeadDim, s.ropeCS)
		s.cache.store(l, start+b, k[b*kvDim:(b+1)*kvDim], v[b*kvDim:(b+1)*kvDim])
	}
	s.attention(l, n, start)
	s.acts.reset(s.attn[:n*qDim], qDim, n)
	proj := s.proj[:n*embd]
	matmul(m.pool, s.acts, matJob{&ly.o, proj})
	addTo(x, proj)

	// Feed-forward.
	for b := range n {
		rmsNorm(xn[b*embd:(b+1)*embd], x[b*embd:(b+1)*embd], ly.ffnNorm, c.RMSEps)
	}
	s.acts.reset(xn, embd, n)
	gate, up := s.gate[:n*c.FFN], s.up[:n*c.FFN]
	matmul(m.pool, s.acts, matJob{&ly.gate, gate}, matJob{&ly.up, up})
	simdWidth.swiglu(gate, gate, up)
	s.acts.reset(gate, c.FFN, n)
	matmul(m.pool, s.acts, matJob{&ly.down, proj})
	addTo(x, proj)
}

// attention computes every query head of n tokens at positions start..,
// each over the positions up to and including its own (causal), in
// parallel over (token, head) pairs.
func (s *Step) attention(l, n, start int) {
	s.heads = headsTask{s: s, l: l, start: start}
	s.m.pool.run(n*s.m.cfg.Heads, 1, &s.heads)
}

// headsTask is attention's loop body over (token, head) pairs of layer l,
// the first token at position start.
type headsTask struct {
	s        *Step
	l, start int
}

func (t *headsTask) do(worker, lo, hi int) {
	s, c := t.s, &t.s.m.cfg
	hd, qDim := c.HeadDim, c.QDim()
	group := c.Heads / c.KVHeads
	scale := 1 / float32(math.Sqrt(float64(hd)))
	for i := lo; i < hi; i++ {
		b, h := i/c.Heads, i%c.Heads
		off := b*qDim + h*hd
		attendHead(s.attn[off:off+hd], s.q[off:off+hd], s.cache, t.l, h/group, hd, t.start+b+1, scale, &s.scratch[worker])
	}
}
