package model

// attnScratch is one thread's working memory for attention.
type attnScratch struct {
	q      []float32 // [headDim] the query rounded to f16
	scores []float32 // [positions] scores, then probabilities rounded to f16
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
// positions 0..n-1 of layer l, reading KV head kvHead.
//
// As llama.cpp does without flash attention: score_t = k_t · f16(q) with f16
// keys; w_t = score_t * scale; p = softmax(w); out[d] = Σ_t f16(p_t) * v_t[d]
// with f16 values — each sum in ggml's association order (see simd).
func attendHead(out, q []float32, c *kvCache, l, kvHead, headDim, n int, scale float32, s *attnScratch) {
	s.ensure(headDim, n)
	q16 := s.q[:headDim]
	for i, x := range q {
		q16[i] = roundF16(x)
	}
	off := kvHead * headDim
	scores := s.scores[:n]
	for t := range n {
		scores[t] = simdWidth.dotF16(c.key(l, t, off, headDim), q16, headDim, false) * scale
	}
	simdWidth.softmax(scores)
	for t, p := range scores {
		scores[t] = roundF16(p)
	}
	for d := range headDim {
		out[d] = simdWidth.dotF16(c.values(l, off+d, n), scores, n, true)
	}
}
