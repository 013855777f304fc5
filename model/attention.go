package model

import "math"

// attnScratch is one thread's working memory for attention and RoPE.
type attnScratch struct {
	q      []float32 // [headDim] the query rounded to f16
	scores []float32 // [positions] scores, then probabilities rounded to f16
	pad    f16Pad    // the value products' partial vectors
	cs     []float32 // [RopeDims] RoPE's cos/sin table of one position
	run    []float32 // one dimension of a run of values (kvCache.storeValues)

	// attendGroup's: the queries rounded to f16 ([queries*headDim]), their
	// scores then probabilities ([queries*positions]), element counts
	// ([queries]) and outputs ([queries*headDim]).
	gq, gs, gout []float32
	gn           []int32
}

// ensureGroup sizes attendGroup's scratch for nq queries of headDim over
// positions positions.
func (s *attnScratch) ensureGroup(nq, headDim, positions int) {
	if len(s.gq) < nq*headDim {
		s.gq = make([]float32, nq*headDim)
		s.gout = make([]float32, nq*headDim)
	}
	if len(s.gn) < nq {
		s.gn = make([]int32, nq)
	}
	if len(s.gs) < nq*positions {
		// One more position per decode step: grow geometrically so that
		// a step does not allocate.
		s.gs = make([]float32, max(nq*positions, 2*len(s.gs), 256*nq))
	}
}

// runTmp returns the thread's scratch for n values of one dimension.
func (s *attnScratch) runTmp(n int) []float32 {
	if len(s.run) < n {
		s.run = make([]float32, n)
	}
	return s.run[:n]
}

// ropeCS returns the thread's RoPE table of dims entries.
func (s *attnScratch) ropeCS(dims int) []float32 {
	if len(s.cs) < dims {
		s.cs = make([]float32, dims)
	}
	return s.cs[:dims]
}

// f16Pad holds, for simd.dotF16Rows, each row's zero-padded partial last
// vector (px: 8 f16, 16 bytes a row) and y's (py: 8 float32).
type f16Pad struct {
	px []byte
	py [8]float32
}

// fill copies the partial vectors of rows rows of x (xstride bytes apart)
// and of y, for products over np elements, zero-padded to 8 lanes.
func (p *f16Pad) fill(x []byte, xstride int, y []float32, np, rows int) {
	i := np - np%8
	if len(p.px) < 16*rows {
		p.px = make([]byte, 16*max(rows, 2*len(p.px)/16))
	}
	clear(p.py[:])
	copy(p.py[:], y[i:np])
	for r := range rows {
		dst := p.px[16*r : 16*r+16]
		k := copy(dst, x[r*xstride+2*i:r*xstride+2*np])
		clear(dst[k:])
	}
}

func (s *attnScratch) ensure(headDim, positions int) {
	if len(s.q) < headDim {
		s.q = make([]float32, headDim)
	}
	if len(s.scores) < positions {
		// Decode asks for one more position per token: grow geometrically
		// so that a step does not allocate.
		s.scores = make([]float32, max(positions, 2*len(s.scores), 256))
	}
}

// attendHead computes one query head's attention output out ([headDim]) over
// positions first..n-1 of layer l, reading KV head kvHead (first > 0: a
// sliding window, positions before it masked).
//
// As llama.cpp does without flash attention: score_t = k_t · f16(q) with f16
// keys; w_t = score_t * scale; p = softmax(w); out[d] = Σ_t f16(p_t) * v_t[d]
// with f16 values — each sum in ggml's association order (see simd).
//
// llama.cpp masks the positions before first with -inf over the whole
// cache: their probabilities are 0 and add nothing to the softmax's sum or
// the value products. Here they are skipped from the vector boundary below
// first on (a multiple of 4 vectors, so every later position keeps its
// vector lane and accumulator), which sums bit for bit as the whole range:
// whole vectors of zeros leave each lane's sum as it was.
//
// batch is a row of a pass that holds two or more of its sequence's
// tokens: llama.cpp's mul_mat then runs both products through llamafile's
// tinyBLAS (ggml's F16 batch order, simd.dotF16RowsBatch) where it takes
// them — the key products when headDim is a multiple of the lanes (its
// n_kv rows, padded to 256, are always a multiple of 4), the value
// products when headDim is a multiple of 4 (its n_kv columns are always a
// multiple of the lanes).
func attendHead(out, q []float32, c *kvCache, l, kvHead, headDim, first, n int, scale float32, batch bool, s *attnScratch) {
	a := first - first%(4*simdWidth.lanes)
	s.ensure(headDim, n-a)
	q16 := s.q[:headDim]
	roundF16s(q16, q)
	off := kvHead * headDim
	scores := s.scores[:n-a] // scores[j] is position a+j's
	masked := scores[:first-a]
	for j := range masked {
		masked[j] = float32(math.Inf(-1))
	}
	// Keys are position-major: row t of the key products is position t.
	kept := scores[first-a:]
	if batch && headDim%simdWidth.lanes == 0 {
		simdWidth.dotF16RowsBatch(kept, c.keys(l, off)[2*first*c.kvDim:], 2*c.kvDim, q16, headDim, &s.pad)
	} else {
		simdWidth.dotF16Rows(kept, c.keys(l, off)[2*first*c.kvDim:], 2*c.kvDim, q16, headDim, false, &s.pad)
	}
	simdWidth.probs(scores, scale) // the masked scores stay -Inf
	// Values are transposed: row d of the value products is dimension off+d.
	if batch && headDim%4 == 0 {
		simdWidth.dotF16RowsBatch(out[:headDim], c.valueRows(l, off)[2*a:], 2*c.capacity, scores, n-a, &s.pad)
		return
	}
	simdWidth.dotF16Rows(out[:headDim], c.valueRows(l, off)[2*a:], 2*c.capacity, scores, n-a, true, &s.pad)
}

// groupRows is the most rows of one sequence attendGroup takes at once:
// its scores take rows × the heads of a group × positions floats.
const groupRows = 8

// groupedAttention reports whether attention takes attendGroup in a layer
// (sliding: a sliding-window layer): where the 16-lane kernel runs
// (dotF16RowsQ) and headDim is a multiple of 64, so that the key products
// have no scalar tail, outside sliding windows.
func groupedAttention(c *Config, sliding bool) bool {
	return useRowsQ16 && simdWidth.lanes == 16 && c.HeadDim%64 == 0 && !sliding
}

// attendGroup is attendHead (one-token order, no window) for every query
// head of KV head kvHead in rows b0..b1-1 of the pass, rows of one
// sequence at consecutive positions: each key and value row is read once
// for all of those heads and rows (the rows of a verify span, the query
// heads that share a KV head). Row b's heads see positions 0..rowPos[b],
// so the key products run to the last row's position and each head keeps
// its own; every head's scores, softmax and value products are
// attendHead's, bit for bit.
func (s *Sequence) attendGroup(l, b0, b1, kvHead int, scale float32, sc *attnScratch) {
	c := &s.m.cfg
	hd, qDim, group := c.HeadDim, c.QDim(), c.Heads/c.KVHeads
	cache := s.rowSeq[b0].cache
	nq, last := (b1-b0)*group, s.rowPos[b1-1]+1
	sc.ensureGroup(nq, hd, last)
	qs, scores, ns, outs := sc.gq[:nq*hd], sc.gs[:nq*last], sc.gn[:nq], sc.gout[:nq*hd]
	for j := range nq {
		b, h := b0+j/group, kvHead*group+j%group
		roundF16s(qs[j*hd:(j+1)*hd], s.q[b*qDim+h*hd:][:hd])
		ns[j] = int32(hd)
	}
	off := kvHead * hd
	// Keys are position-major: row t of the key products is position t.
	dotF16RowsQ(scores, last, cache.keys(l, off), 2*cache.kvDim, last, qs, hd, ns)
	for j := range nq {
		n := s.rowPos[b0+j/group] + 1
		simdWidth.probs(scores[j*last:j*last+n], scale)
		ns[j] = int32(n)
	}
	// Values are transposed: row d of the value products is dimension off+d.
	dotF16RowsQ(outs, hd, cache.valueRows(l, off), 2*cache.capacity, hd, scores, last, ns)
	for j := range nq {
		b, h := b0+j/group, kvHead*group+j%group
		copy(s.attn[b*qDim+h*hd:][:hd], outs[j*hd:(j+1)*hd])
	}
}
