package model

import (
	"encoding/binary"

	"github.com/realizar-host/realizar-host/q4k"
)

// attnScratch is one thread's working memory for attention.
type attnScratch struct {
	q16    []byte    // [headDim] f16: the query rounded
	scores []float32 // [positions] scores, then probabilities
	p16    []byte    // [positions] f16: the probabilities rounded
}

func (s *attnScratch) ensure(headDim, positions int) {
	if len(s.q16) < 2*headDim {
		s.q16 = make([]byte, 2*headDim)
	}
	if len(s.scores) < positions {
		s.scores = make([]float32, positions)
		s.p16 = make([]byte, 2*positions)
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
	q16 := s.q16[:2*headDim]
	for i, x := range q {
		binary.LittleEndian.PutUint16(q16[2*i:], q4k.F32ToF16(x))
	}
	off := kvHead * headDim
	scores := s.scores[:n]
	for t := range n {
		scores[t] = simdWidth.dotF16(c.key(l, t, off, headDim), q16, headDim, false) * scale
	}
	simdWidth.softmax(scores)
	p16 := s.p16[:2*n]
	for t, p := range scores {
		binary.LittleEndian.PutUint16(p16[2*t:], q4k.F32ToF16(p))
	}
	for d := range headDim {
		out[d] = simdWidth.dotF16(c.values(l, off+d, n), p16, n, true)
	}
}
