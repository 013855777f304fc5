package model

import (
	"fmt"
	"math"
)

// This file is the mixture-of-experts feed-forward of qwen3moe, as
// llama.cpp's build_moe_ffn computes it for that architecture:
//
//	p      = softmax(W_router · x)                 over Experts
//	top    = the ExpertsUsed largest p, largest first
//	w_k    = p_top[k] / max(Σ_k p_top[k], 2^-14)   (always normalized)
//	ffn(x) = Σ_k w_k · Wdown_e · (silu(Wgate_e·x) * Wup_e·x),  e = top[k]
//
// The sum runs over k in that order, left to right, each term rounded to
// f32 after its weight multiplies it. Only the chosen experts' rows are
// read.

// minExpertWeightSum is the clamp llama.cpp applies to the sum of the
// chosen weights before dividing by it (the smallest normal f16).
const minExpertWeightSum = 6.103515625e-5

// moeLayer is one block's router and experts.
type moeLayer struct {
	router linear   // ffn_gate_inp: [Experts rows × Embd]
	exps   []expert // the experts' slices of the merged tensors
	// gateExps, upExps and downExps are the merged 3-D tensors as one
	// matrix each (Experts·rows of one expert), for Weights.
	gateExps, upExps, downExps linear
}

// expert is one expert's SwiGLU weights: views into the merged tensors.
type expert struct {
	gate, up linear // [ExpertFFN × Embd]
	down     linear // [Embd × ExpertFFN]
}

// moeLayer loads block i's router and merged expert tensors.
func (l *loader) moeLayer(i int, c *Config) *moeLayer {
	n := func(format string) string { return fmt.Sprintf(format, i) }
	ml := &moeLayer{router: l.matrix(n(tensorFFNGateInp), c.Experts, c.Embd)}
	var gate, up, down []linear
	ml.gateExps, gate = l.experts(n(tensorFFNGateExps), c.ExpertFFN, c.Embd, c.Experts)
	ml.upExps, up = l.experts(n(tensorFFNUpExps), c.ExpertFFN, c.Embd, c.Experts)
	ml.downExps, down = l.experts(n(tensorFFNDownExps), c.Embd, c.ExpertFFN, c.Experts)
	if l.err != nil {
		return nil
	}
	ml.exps = make([]expert, c.Experts)
	for e := range ml.exps {
		ml.exps[e] = expert{gate: gate[e], up: up[e], down: down[e]}
	}
	return ml
}

// experts loads a merged expert tensor of n experts, each [rows][cols]
// (GGUF dims [cols rows n]): the whole as one matrix of n·rows rows, and
// each expert's rows as a matrix of its own.
func (l *loader) experts(name string, rows, cols, n int) (linear, []linear) {
	if l.err != nil {
		return linear{}, nil
	}
	dims, typ, data, err := l.src.tensor(name)
	if err != nil {
		l.err = err
		return linear{}, nil
	}
	if len(dims) != 3 || dims[0] != int64(cols) || dims[1] != int64(rows) || dims[2] != int64(n) {
		l.err = &TensorError{Tensor: name, Err: ErrShape, Detail: fmt.Sprintf("dims %v, want [%d %d %d]", dims, cols, rows, n)}
		return linear{}, nil
	}
	all, err := newLinearFor(name, typ, n*rows, cols, data, false)
	if err != nil {
		l.err = err
		return linear{}, nil
	}
	per := make([]linear, n)
	size := rows * all.rowSize
	for e := range per {
		// Checked by newLinearFor above: the slices are whole rows of a
		// supported type.
		per[e], _ = newLinearFor(name, typ, rows, cols, all.data[e*size:(e+1)*size], false)
	}
	return all, per
}

// moeScratch is a Step's buffers for the expert FFN of a pass of up to
// batch rows.
type moeScratch struct {
	logits []float32 // [batch*Experts] router outputs, then probabilities
	sel    []int32   // [batch*ExpertsUsed] chosen experts of each row, best first
	w      []float32 // [batch*ExpertsUsed] their normalized weights
	outs   []float32 // [batch*ExpertsUsed*Embd] each chosen expert's weighted output
	slots  []int32   // [batch] row*ExpertsUsed+k of the rows an expert serves
	x      []float32 // [batch*Embd] those rows' inputs, gathered
	gate   []float32 // [batch*ExpertFFN]
	up     []float32 // [batch*ExpertFFN]
	down   []float32 // [batch*Embd]
}

func newMoEScratch(c *Config, batch int) moeScratch {
	k := c.ExpertsUsed
	return moeScratch{
		logits: make([]float32, batch*c.Experts),
		sel:    make([]int32, batch*k),
		w:      make([]float32, batch*k),
		outs:   make([]float32, batch*k*c.Embd),
		slots:  make([]int32, batch),
		x:      make([]float32, batch*c.Embd),
		gate:   make([]float32, batch*c.ExpertFFN),
		up:     make([]float32, batch*c.ExpertFFN),
		down:   make([]float32, batch*c.Embd),
	}
}

// moeFFN adds the expert FFN of layer ly over the pass's n rows to x; xn
// holds the rows' ffn_norm outputs. Each expert runs once over the rows
// routed to it, which it reads together; every row's result is the one it
// gets alone (the product kernels compute each column independently).
// batched marks the rows whose router product takes the batch kernel (as
// for a dense feed-forward, Step.ffnBatched); ggml_mul_mat_id multiplies
// the experts in the one-column order for every row.
func (s *Sequence) moeFFN(ly *moeLayer, x, xn []float32, n int, batched []bool) {
	m, c := s.m, &s.m.cfg
	embd, ne, k, ff := c.Embd, c.Experts, c.ExpertsUsed, c.ExpertFFN
	ms := &s.moe

	// Route every row.
	logits := ms.logits[:n*ne]
	s.acts.resetBatched(xn, embd, n, batched)
	matmul(m.pool, s.acts, matJob{&ly.router, logits})
	for b := range n {
		p := logits[b*ne : (b+1)*ne]
		simdWidth.softmaxRow(p)
		route(ms.sel[b*k:(b+1)*k], ms.w[b*k:(b+1)*k], p)
	}

	// Each chosen expert over the rows that chose it, in expert order.
	for e := range ly.exps {
		g := 0
		for i, sel := range ms.sel[:n*k] {
			if int(sel) == e {
				ms.slots[g] = int32(i)
				copy(ms.x[g*embd:(g+1)*embd], xn[(i/k)*embd:(i/k+1)*embd])
				g++
			}
		}
		if g == 0 {
			continue
		}
		ex := &ly.exps[e]
		gate, up, down := ms.gate[:g*ff], ms.up[:g*ff], ms.down[:g*embd]
		s.acts.reset(ms.x[:g*embd], embd, g)
		matmul(m.pool, s.acts, matJob{&ex.gate, gate}, matJob{&ex.up, up})
		for j := range g { // ggml_swiglu a row at a time
			simdWidth.swiglu(gate[j*ff:(j+1)*ff], gate[j*ff:(j+1)*ff], up[j*ff:(j+1)*ff])
		}
		s.acts.reset(gate, ff, g)
		matmul(m.pool, s.acts, matJob{&ex.down, down})
		for j, slot := range ms.slots[:g] {
			w := ms.w[slot]
			dst := ms.outs[int(slot)*embd : (int(slot)+1)*embd]
			for i, v := range down[j*embd : (j+1)*embd] {
				dst[i] = v * w
			}
		}
	}

	// Sum each row's experts in rank order and add the sum to the residual.
	for b := range n {
		acc := ms.outs[b*k*embd : (b*k+1)*embd]
		for r := 1; r < k; r++ {
			addTo(acc, ms.outs[(b*k+r)*embd:(b*k+r+1)*embd])
		}
		addTo(x[b*embd:(b+1)*embd], acc)
	}
}

// route picks the len(sel) most probable experts of p, most probable first
// (a tie goes to the lower index; llama.cpp's std::sort leaves ties in no
// defined order), and their weights normalized to sum to one as llama.cpp
// normalizes them: each divided by the f32 rounding of their float64 sum,
// clamped below at 2^-14.
func route(sel []int32, w []float32, p []float32) {
	for k := range sel {
		best := -1
		for e, v := range p {
			if taken(sel[:k], e) {
				continue
			}
			if best < 0 || v > p[best] {
				best = e
			}
		}
		sel[k] = int32(best)
	}
	var sum float64
	for _, e := range sel {
		sum += float64(p[e])
	}
	total := max(float32(sum), minExpertWeightSum)
	for k, e := range sel {
		w[k] = p[e] / total
	}
}

func taken(sel []int32, e int) bool {
	for _, s := range sel {
		if int(s) == e {
			return true
		}
	}
	return false
}

// softmaxRow turns x into probabilities in place as ggml_soft_max does for
// one row on the CPU (ggml_vec_soft_max_f32): whole vectors of lanes take
// ggml_v_expf(x - max) and add their horizontal sum to a float64 total, the
// tail takes glibc's expf one by one into the same total; the values are
// then multiplied by f32(1/total).
func (s simd) softmaxRow(x []float32) {
	maxX := float32(math.Inf(-1))
	for _, v := range x {
		maxX = max(maxX, v)
	}
	l := s.lanes
	nv := len(x) - len(x)%l
	var sum float64
	var chunk [16]float32
	for i := 0; i < nv; i += l {
		for j := range l {
			e := s.expf(x[i+j] - maxX)
			x[i+j] = e
			chunk[j] = e
		}
		if l == 16 {
			sum += float64(reduceAdd16(&chunk))
		} else {
			sum += float64(reduceAdd8Softmax(chunk[:8]))
		}
	}
	for i := nv; i < len(x); i++ {
		e := glibcExpf(x[i] - maxX)
		x[i] = e
		sum += float64(e)
	}
	inv := float32(1 / sum)
	for i := range x {
		x[i] *= inv
	}
}

// RouteExperts routes one token as the CPU forward does, for other
// backends: logits (the router's [Experts] outputs) become probabilities in
// place (ggml_soft_max); sel gets the len(sel) most probable experts, best
// first (the lowest index among equals), and w ([len(sel)]) their
// probabilities normalized to sum 1.
func RouteExperts(sel []int32, w, logits []float32) {
	simdWidth.softmaxRow(logits)
	route(sel, w, logits)
}
