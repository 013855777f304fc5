package model

import (
	"fmt"
	"math"

	"github.com/realizar-host/realizar-host/forward"
	"github.com/realizar-host/realizar-host/internal/quant"
)

// Sequence is one sequence's decoding state over a Model: its KV cache and
// scratch. It
// implements forward.Sequence, forward.Prefiller, forward.Reserver and
// forward.BackendReporter. A Sequence is not safe for concurrent use;
// Sequences of
// one Model may run concurrently.
type Sequence struct {
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
	qkv     []float32 // [batch*(QDim+2*KVDim)] fused attn_qkv's output; empty without
	gate    []float32 // [batch*FFN]; empty for MoE
	up      []float32 // [batch*FFN], FusedFFN [batch*2*FFN]; empty for MoE
	moe     moeScratch
	logits  []float32 // [Vocab]
	scratch []attnScratch
	heads   headsTask  // attention's loop body, reused
	ropeKV  ropeKVTask // RoPE and the key store's loop body, reused
	values  valuesTask // the value store's loop body, reused

	// A pass's rows: the sequence (step) and position of each, the
	// sequences themselves, and the logits of several sequences.
	rowSeq []*Sequence
	rowPos []int
	// rowBatch marks the rows of sequences with two or more rows in the
	// pass (see pass); batched is rowBatch, or nil when none is marked.
	rowBatch []bool
	batched  []bool
	runs     []int // attention's runs of rows (see attention)
	rows     []passSeq
	outs     []float32 // [k*Vocab] when k > 1 rows ask for logits
	verified []float32 // Verify's logits, [rows*Vocab]
	one      [1]int32  // Step's token, kept here so that a step allocates nothing
}

var (
	_ forward.Sequence        = (*Sequence)(nil)
	_ forward.Prefiller       = (*Sequence)(nil)
	_ forward.Reserver        = (*Sequence)(nil)
	_ forward.BackendReporter = (*Sequence)(nil)
	_ forward.Verifier        = (*Sequence)(nil)
)

// NewSequence returns an empty decoding state. Its KV cache starts empty and
// grows on demand (or to Reserve's size).
func (m *Model) NewSequence() *Sequence {
	c := &m.cfg
	return &Sequence{
		m:       m,
		cache:   newKVCache(c.Layers, c.KVDim()),
		acts:    newActCache(),
		logits:  make([]float32, c.Vocab),
		scratch: make([]attnScratch, m.pool.threads),
	}
}

// Reset forgets every held position; the cache's memory is kept.
func (s *Sequence) Reset() { s.held = 0 }

// Backend names the kernels in use ("cpu-avx2", "cpu-generic"); onGPU is
// always false.
func (s *Sequence) Backend() (name string, onGPU bool) { return "cpu-" + kernelName(), false }

// Reserve sizes the KV cache for positions positions (1 <= positions <=
// ContextLength), keeping what it holds: dropped is always false. It never
// shrinks the cache.
//
// Errors: forward.ErrContextExceeded when positions > ContextLength.
func (s *Sequence) Reserve(positions int) (dropped bool, err error) {
	if positions > s.m.cfg.ContextLength {
		return false, fmt.Errorf("model: reserve %d positions, context length %d: %w", positions, s.m.cfg.ContextLength, forward.ErrContextExceeded)
	}
	if positions < 1 {
		return false, fmt.Errorf("%w: reserve %d positions", ErrPosition, positions)
	}
	s.cache.grow(positions, s.held)
	return false, nil
}

// CacheBytes is the size of the KV cache in bytes at its current capacity.
func (s *Sequence) CacheBytes() int64 { return s.cache.bytes() }

// Step processes token at position and returns the logits after it,
// [Vocab]float32, valid until the next call. position may be at most the
// number of positions held: stepping an earlier position discards the ones
// after it.
//
// Errors: forward.ErrBadToken for a token outside [0, Vocab); ErrPosition for
// a gap; forward.ErrContextExceeded at position >= ContextLength.
func (s *Sequence) Step(token int32, position int) ([]float32, error) {
	s.one[0] = token
	if err := s.check(s.one[:], position); err != nil {
		return nil, err
	}
	s.forward(s.one[:], position)
	return s.logits, nil
}

// Prefill processes tokens[start:] (positions start..len(tokens)-1) in
// batched passes and returns the logits after the last token, as Step
// does. tokens[:start] must be held (start <= positions held).
//
// Each pass quantizes its tokens' activations once per matrix and reads each
// weight row once for the whole pass. A pass of two or more tokens sums
// in llama.cpp's batch orders (llamafile's for F16 and F32 products,
// attention's included), one token in Step's: the logits are llama.cpp's
// for the span in one ubatch, and equal Step-by-step logits only with
// BatchSize 1 or a span of one token.
func (s *Sequence) Prefill(tokens []int32, start int) ([]float32, error) {
	if start < 0 || start >= len(tokens) {
		return nil, fmt.Errorf("%w: prefill from %d of %d tokens", ErrPosition, start, len(tokens))
	}
	if err := s.check(tokens[start:], start); err != nil {
		return nil, err
	}
	for lo := start; lo < len(tokens); {
		hi := prefillChunkEnd(lo, len(tokens), s.m.batchSize)
		s.forward(tokens[lo:hi], lo)
		lo = hi
	}
	return s.logits, nil
}

// prefillChunkEnd is the end of the prefill pass that starts at token lo of
// n, at most batch tokens. It never leaves one token for a last pass: a
// pass of two or more sums in ggml's batch orders whatever its size, so the
// span gets the bits llama.cpp's one ubatch gives it.
func prefillChunkEnd(lo, n, batch int) int {
	hi := min(lo+batch, n)
	if n-hi == 1 && hi-lo > 2 {
		hi--
	}
	return hi
}

// Verify processes tokens[start:] (positions start..len(tokens)-1) in one
// pass and returns the logits after every one of them: [n*Vocab]float32
// for n = len(tokens)-start, row i the logits after tokens[start+i], valid
// until the step's next call. tokens[:start] must be held (start <=
// positions held; the positions after start are discarded and overwritten).
//
// Every row sums in Step's one-token order, not a prompt's batch orders,
// so row i is bit-identical to the logits Step(tokens[start+i], start+i)
// returns after stepping the rows before it: a speculative decoder checks
// k drafts for about the price of one weight read. The weights are read
// once for all rows (the column kernels decode each block once for
// several columns and give each column the one-column bits).
//
// Errors: those of Step (ErrPosition, forward.ErrBadToken,
// forward.ErrContextExceeded); nothing is held after start on an error.
func (s *Sequence) Verify(tokens []int32, start int) ([]float32, error) {
	if start < 0 || start >= len(tokens) {
		return nil, fmt.Errorf("%w: verify from %d of %d tokens", ErrPosition, start, len(tokens))
	}
	span := tokens[start:]
	if err := s.check(span, start); err != nil {
		return nil, err
	}
	s.rows = append(s.rows[:0], passSeq{seq: s, start: start, tokens: span, logits: true, every: true})
	s.pass(s.rows)
	return s.verified[:len(span)*s.m.cfg.Vocab], nil
}

// check validates a span of tokens at positions start.. and makes room.
func (s *Sequence) check(tokens []int32, start int) error {
	c := &s.m.cfg
	if start < 0 || start > s.held {
		return fmt.Errorf("%w: position %d with %d held", ErrPosition, start, s.held)
	}
	end := start + len(tokens)
	if end > c.ContextLength {
		return fmt.Errorf("model: position %d, context length %d: %w", end-1, c.ContextLength, forward.ErrContextExceeded)
	}
	for _, t := range tokens {
		if t < 0 || int(t) >= c.Vocab {
			return fmt.Errorf("model: token %d, vocabulary %d: %w", t, c.Vocab, forward.ErrBadToken)
		}
	}
	if end > s.cache.capacity {
		s.cache.grow(min(max(end, 2*s.cache.capacity, 256), c.ContextLength), s.held)
	}
	return nil
}

// ensureBatch sizes the scratch for n tokens.
func (s *Sequence) ensureBatch(n int) {
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
	if s.m.fusedQKV {
		s.qkv = make([]float32, n*(c.QDim()+2*c.KVDim()))
	}
	if c.MoE() {
		s.moe = newMoEScratch(c, n)
		return
	}
	s.gate = make([]float32, n*c.FFN)
	if c.FusedFFN {
		s.up = make([]float32, n*2*c.FFN)
		return
	}
	s.up = make([]float32, n*c.FFN)
}

// forward runs tokens (already checked) at positions start.. through the
// model, leaving the last token's logits in s.logits.
func (s *Sequence) forward(tokens []int32, start int) {
	s.rows = append(s.rows[:0], passSeq{seq: s, start: start, tokens: tokens, logits: true})
	s.pass(s.rows)
}

// passSeq is one sequence's rows in a pass: tokens at positions start..,
// its KV cache in seq.
type passSeq struct {
	seq    *Sequence
	start  int
	tokens []int32
	logits bool // compute the logits after the last token into seq.logits
	// every computes the logits after every row into seq.verified (with
	// logits), each row in the one-token order (Verify).
	every bool
}

// pass runs the rows of seqs (already checked, distinct sequences of s.m)
// through the model in one batched pass with s's scratch: every matrix
// product reads each weight row once for all rows; RoPE, the KV store and
// attention use each row's own sequence and position. A row's result does
// not depend on the other rows (each column of a product is computed alone).
func (s *Sequence) pass(seqs []passSeq) {
	m, c := s.m, &s.m.cfg
	s.rowSeq, s.rowPos, s.rowBatch, s.batched = s.rowSeq[:0], s.rowPos[:0], s.rowBatch[:0], nil
	anyBatch := false
	for _, q := range seqs {
		// A sequence's rows take ggml's batch orders when it has two or
		// more in this pass, as its tokens would in a llama.cpp ubatch of
		// its own; one row (a decode step) keeps the one-token order, so
		// its logits are those it gets alone.
		// A verify span's rows all keep it too (each is the decode step
		// it stands for).
		batch := len(q.tokens) >= quant.BatchColumns && !q.every
		anyBatch = anyBatch || batch
		for i := range q.tokens {
			s.rowSeq = append(s.rowSeq, q.seq)
			s.rowPos = append(s.rowPos, q.start+i)
			s.rowBatch = append(s.rowBatch, batch)
		}
	}
	if anyBatch {
		s.batched = s.rowBatch
	}
	n := len(s.rowPos)
	s.ensureBatch(n)
	x := s.x[:n*c.Embd]
	b := 0
	for _, q := range seqs {
		for _, t := range q.tokens {
			// Checked at load: the embedding's rows decode.
			row := x[b*c.Embd : (b+1)*c.Embd]
			_ = quant.Dequantize(m.embd.typ, row, m.embd.row(int(t)))
			if c.EmbdScale != 0 {
				// gemma3: ggml_scale of the embeddings by sqrtf(n_embd).
				for i := range row {
					row[i] *= c.EmbdScale
				}
			}
			b++
		}
	}
	for l := range m.layers {
		s.block(l, n)
	}
	// The output head over the last row of each sequence that asks (every
	// row of a verify span). With k > 1 rows the head reads its weights
	// once for all of them, each row in the one-column order.
	k, b := 0, 0
	for _, q := range seqs {
		b += len(q.tokens)
		q.seq.held = q.start + len(q.tokens)
		if !q.logits {
			continue
		}
		first := b - 1
		if q.every {
			first = b - len(q.tokens)
		}
		for r := first; r < b; r++ {
			rmsNorm(s.xn[k*c.Embd:(k+1)*c.Embd], x[r*c.Embd:(r+1)*c.Embd], m.outNorm, c.RMSEps)
			k++
		}
	}
	if k == 0 {
		return
	}
	out := s.logits
	if k > 1 {
		if len(s.outs) < k*c.Vocab {
			s.outs = make([]float32, k*c.Vocab)
		}
		out = s.outs[:k*c.Vocab]
	}
	s.acts.reset(s.xn[:k*c.Embd], c.Embd, k)
	matmul(m.pool, s.acts, matJob{w: &m.output, out: out})
	if c.LogitSoftcap != 0 {
		softcap(out, c.LogitSoftcap)
	}
	k = 0
	for _, q := range seqs {
		if !q.logits {
			continue
		}
		if q.every {
			n := len(q.tokens) * c.Vocab
			if len(q.seq.verified) < n {
				q.seq.verified = make([]float32, n)
			}
			copy(q.seq.verified, out[k*c.Vocab:k*c.Vocab+n])
			k += len(q.tokens)
			copy(q.seq.logits, out[(k-1)*c.Vocab:k*c.Vocab])
			continue
		}
		copy(q.seq.logits, out[k*c.Vocab:(k+1)*c.Vocab]) // a no-op when out is q.seq.logits
		k++
	}
}

// block runs transformer block l over the pass's n rows (s.rowSeq, s.rowPos):
//
//	x += Wo · attention(rope(qn(Wq·norm(x))), rope(kn(Wk·norm(x))), Wv·norm(x))
//	x += Wdown · (silu(Wgate·norm(x)) * Wup·norm(x))
//
// qn and kn are qwen3's and gemma3's per-head norms, the identity elsewhere.
// In a MoE layer the feed-forward is the routed experts' (moeFFN). phi3
// computes Q, K and V in one product (attn_qkv) and gate and up in one
// (ffn_up, the gate's rows first), and scales the rotated Q by QueryScale
// instead of the scores, as gemma3 does. gemma3 also RMS-normalizes each
// sublayer's output before the residual add (post_attention_norm,
// post_ffw_norm), gates with GELU instead of SiLU, and rotates its sliding
// layers with their own RoPE.
func (s *Sequence) block(l, n int) {
	m, c := s.m, &s.m.cfg
	ly := &m.layers[l]
	embd, qDim, kvDim := c.Embd, c.QDim(), c.KVDim()
	x, xn := s.x[:n*embd], s.xn[:n*embd]
	q, k, v := s.q[:n*qDim], s.k[:n*kvDim], s.v[:n*kvDim]

	// Attention.
	for b := range n {
		rmsNorm(xn[b*embd:(b+1)*embd], x[b*embd:(b+1)*embd], ly.attnNorm, c.RMSEps)
	}
	s.acts.resetBatched(xn, embd, n, s.batched)
	if ly.qkv.data != nil {
		// The fused product's row b is Q, K and V of row b one after
		// another (llama.cpp's views of it).
		w := qDim + 2*kvDim
		qkv := s.qkv[:n*w]
		matmul(m.pool, s.acts, matJob{&ly.qkv, qkv})
		for b := range n {
			r := qkv[b*w : (b+1)*w]
			copy(q[b*qDim:(b+1)*qDim], r[:qDim])
			copy(k[b*kvDim:(b+1)*kvDim], r[qDim:qDim+kvDim])
			copy(v[b*kvDim:(b+1)*kvDim], r[qDim+kvDim:])
		}
	} else {
		matmul(m.pool, s.acts, matJob{&ly.q, q}, matJob{&ly.k, k}, matJob{&ly.v, v})
	}
	if ly.qNorm != nil {
		// qwen3, gemma3: each head of Q and K is RMS-normalized over
		// HeadDim before RoPE.
		headNorm(q, ly.qNorm, c.RMSEps)
		headNorm(k, ly.kNorm, c.RMSEps)
	}
	rp := &m.rope
	if c.Sliding(l) {
		rp = &m.ropeSWA
	}
	// Rows are independent here (each rotates its own Q and K and
	// writes its own cache position), so they run on the pool. The
	// values then go by dimensions: the cache holds them transposed
	// (one f16 per row and dimension, a cache line each, held one
	// thread alone when a row wrote its own).
	s.ropeKV = ropeKVTask{s: s, l: l, rp: rp}
	m.pool.run(n, 1, &s.ropeKV)
	s.values = valuesTask{s: s, l: l}
	if n <= valuesAlone {
		s.values.do(0, 0, kvDim)
	} else {
		m.pool.run(kvDim, m.pool.grainFor(kvDim, 16), &s.values)
	}
	if c.ScaleQ {
		// phi3, gemma3: ggml_scale of the rotated Q, the scores then
		// unscaled.
		for i := range q {
			q[i] *= c.QueryScale
		}
	}
	s.attention(l, n)
	s.acts.resetBatched(s.attn[:n*qDim], qDim, n, s.batched)
	proj := s.proj[:n*embd]
	matmul(m.pool, s.acts, matJob{&ly.o, proj})
	s.postNorm(proj, ly.attnPostNorm, n)
	addTo(x, proj)

	// Feed-forward.
	for b := range n {
		rmsNorm(xn[b*embd:(b+1)*embd], x[b*embd:(b+1)*embd], ly.ffnNorm, c.RMSEps)
	}
	if ly.moe != nil {
		s.moeFFN(ly.moe, x, xn, n, s.ffnBatched(l))
		return
	}
	s.acts.resetBatched(xn, embd, n, s.ffnBatched(l))
	gate := s.gate[:n*c.FFN]
	if c.FusedFFN {
		// phi3: row b of the product is the gate's FFN values, then
		// up's; ggml_swiglu takes them a row at a time.
		ff := c.FFN
		gu := s.up[:n*2*ff]
		matmul(m.pool, s.acts, matJob{&ly.up, gu})
		for b := range n {
			r := gu[b*2*ff : (b+1)*2*ff]
			simdWidth.swiglu(gate[b*ff:(b+1)*ff], r[:ff], r[ff:])
		}
	} else {
		up := s.up[:n*c.FFN]
		matmul(m.pool, s.acts, matJob{&ly.gate, gate}, matJob{&ly.up, up})
		if c.GELU {
			geglu(gate, gate, up) // gemma3: ggml_geglu_split(gate, up)
		} else {
			// ggml_swiglu_split a row at a time: each row's whole
			// vectors, then its tail (FFN not a multiple of the lanes).
			ff := c.FFN
			for b := range n {
				simdWidth.swiglu(gate[b*ff:(b+1)*ff], gate[b*ff:(b+1)*ff], up[b*ff:(b+1)*ff])
			}
		}
	}
	s.acts.resetBatched(gate, c.FFN, n, s.ffnBatched(l))
	matmul(m.pool, s.acts, matJob{&ly.down, proj})
	s.postNorm(proj, ly.ffnPostNorm, n)
	addTo(x, proj)
}

// ffnBatched is the rows whose feed-forward products take the batch
// kernels in layer l: s.batched, except in the last layer, where
// llama.cpp's graph keeps only the rows that output logits (ggml_get_rows
// of inp_out_ids after the attention): one row per sequence, which ggml
// multiplies in the one-column order. The other rows' results there are
// dropped.
func (s *Sequence) ffnBatched(l int) []bool {
	if l == len(s.m.layers)-1 {
		return nil
	}
	return s.batched
}

// postNorm RMS-normalizes each of the n rows of a sublayer's output in
// place and scales it by w (gemma3's post_attention_norm and post_ffw_norm);
// nothing when w is nil.
func (s *Sequence) postNorm(out, w []float32, n int) {
	if w == nil {
		return
	}
	embd := s.m.cfg.Embd
	for b := range n {
		r := out[b*embd : (b+1)*embd]
		rmsNorm(r, r, w, s.m.cfg.RMSEps)
	}
}

// ropeKVTask rotates the Q and K rows [lo, hi) of layer l by RoPE at their
// positions and stores their K in their sequences' caches (valuesTask
// stores V).
type ropeKVTask struct {
	s  *Sequence
	l  int
	rp *rope
}

func (t *ropeKVTask) do(worker, lo, hi int) {
	s, c := t.s, &t.s.m.cfg
	qDim, kvDim := c.QDim(), c.KVDim()
	cs := s.scratch[worker].ropeCS(c.RopeDims)
	for b := lo; b < hi; b++ {
		pos := s.rowPos[b]
		k := s.k[b*kvDim : (b+1)*kvDim]
		t.rp.table(cs, pos)
		t.rp.apply(s.q[b*qDim:(b+1)*qDim], c.HeadDim, cs)
		t.rp.apply(k, c.HeadDim, cs)
		s.rowSeq[b].cache.storeKey(t.l, pos, k)
	}
}

// valuesAlone is the most rows of a pass whose values the caller stores
// alone: a decode step's few rows cost less than a loop on the pool.
const valuesAlone = 4

// valuesTask stores the pass's values of layer l in their sequences'
// caches, dimensions [lo, hi) of every row: the cache holds values
// transposed, so each run of rows of one sequence at consecutive positions
// (a prompt's chunk, a verify span; a decode row alone) writes each
// dimension's positions together.
type valuesTask struct {
	s *Sequence
	l int
}

func (t *valuesTask) do(worker, lo, hi int) {
	s, kvDim := t.s, t.s.m.cfg.KVDim()
	n := len(s.rowPos)
	for b := 0; b < n; {
		e := b + 1
		for e < n && s.rowSeq[e] == s.rowSeq[b] && s.rowPos[e] == s.rowPos[e-1]+1 {
			e++
		}
		s.rowSeq[b].cache.storeValues(t.l, s.rowPos[b], e-b, lo, hi, s.v[b*kvDim:e*kvDim], s.scratch[worker].runTmp(e-b))
		b = e
	}
}

// attention computes every query head of the pass's n rows, each over its
// sequence's positions up to and including its own (causal) and, in a
// sliding layer, after its own minus SlidingWindow, in parallel over (row,
// head) pairs.
//
// Where groupedAttention says so, the work is split by (run of rows of one
// sequence, KV head) instead: the rows of a sequence that keep the
// one-token order (a decode row, a verify span) take attendGroup, which
// reads each key and value once for all their query heads of that KV head;
// a sequence's batch rows take attendHead a head at a time.
func (s *Sequence) attention(l, n int) {
	c := &s.m.cfg
	s.heads = headsTask{s: s, l: l}
	if !groupedAttention(c, c.Sliding(l)) {
		s.m.pool.run(n*c.Heads, 1, &s.heads)
		return
	}
	s.runs = append(s.runs[:0], 0)
	for b := 1; b < n; b++ {
		if s.rowSeq[b] != s.rowSeq[b-1] || b-s.runs[len(s.runs)-1] == groupRows {
			s.runs = append(s.runs, b)
		}
	}
	s.runs = append(s.runs, n)
	s.heads.grouped = true
	s.m.pool.run((len(s.runs)-1)*c.KVHeads, 1, &s.heads)
}

// headsTask is attention's loop body over (row, head) pairs of layer l, or
// with grouped over (run, KV head) pairs (s.runs).
type headsTask struct {
	s       *Sequence
	l       int
	grouped bool
}

func (t *headsTask) do(worker, lo, hi int) {
	s, c := t.s, &t.s.m.cfg
	group := c.Heads / c.KVHeads
	scale := 1 / float32(math.Sqrt(float64(c.HeadDim)))
	if c.ScaleQ {
		scale = 1 // Q is scaled already
	}
	for i := lo; i < hi; i++ {
		if !t.grouped {
			t.head(worker, i/c.Heads, i%c.Heads, scale)
			continue
		}
		r, kv := i/c.KVHeads, i%c.KVHeads
		b0, b1 := s.runs[r], s.runs[r+1]
		if !s.rowBatch[b0] {
			s.attendGroup(t.l, b0, b1, kv, scale, &s.scratch[worker])
			continue
		}
		for b := b0; b < b1; b++ {
			for h := kv * group; h < (kv+1)*group; h++ {
				t.head(worker, b, h, scale)
			}
		}
	}
}

// head computes query head h of row b by attendHead.
func (t *headsTask) head(worker, b, h int, scale float32) {
	s, c := t.s, &t.s.m.cfg
	hd, qDim := c.HeadDim, c.QDim()
	off := b*qDim + h*hd
	n := s.rowPos[b] + 1
	first := 0
	if c.Sliding(t.l) {
		// llama.cpp's standard SWA mask: key position p is masked
		// for query position q when q - p >= n_swa.
		first = max(0, n-c.SlidingWindow)
	}
	attendHead(s.attn[off:off+hd], s.q[off:off+hd], s.rowSeq[b].cache, t.l, h/(c.Heads/c.KVHeads), hd, first, n, scale, s.rowBatch[b], &s.scratch[worker])
}
