//go:build cuda || cudaemu

package cuda

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"unsafe"

	"github.com/realizar-host/realizar-host/forward"
	"github.com/realizar-host/realizar-host/internal/quant"
	"github.com/realizar-host/realizar-host/model"
)

// devWeight is a weight matrix in the pool.
type devWeight struct {
	name     string
	typ      quant.Type
	ptr      dptr
	rowBytes int
	rows     int
	cols     int
	bias     dptr // 0 when none
}

type devLayer struct {
	attnNorm, ffnNorm          dptr
	qNorm, kNorm               dptr // [HeadDim] per-head Q/K gains (qwen3, gemma3), else 0
	attnPostNorm, ffnPostNorm  dptr // [Embd] gemma3's post-sublayer norm gains, else 0
	q, k, v, o, gate, up, down devWeight
	// router and the merged experts of a qwen3moe layer (expert e's rows
	// after expert e-1's), else zero; gate, up and down are then zero.
	router, gateExps, upExps, downExps devWeight
}

// gpuSequence is one sequence of the quantized forward of a model.Model on
// one GPU: the weights in one pooled device allocation and the activation
// scratch, shared by every sequence made with NewSequence, and this
// sequence's KV cache on the device. It implements forward.Sequence,
// forward.Prefiller, forward.Reserver, forward.Batcher and
// forward.BackendReporter with the numerics described in the package doc.
// NewSequence wraps it in the parity gate; use it bare only to test the device
// itself. One sequence is not safe for concurrent use; calls on different
// sequences of one model take turns on the device, and Batch runs
// several of them in shared passes.
type gpuSequence struct {
	*devModel

	capacity int  // positions the cache holds
	cache    dptr // per layer: K then V, each [capacity][KVDim] f16
	held     int
	closed   bool

	hostLogits []float32
}

// devModel is what the sequences of one upload share: the device, the
// weights, the scratch of one pass. mu serializes the sequences' calls (the
// scratch is one); refs counts the open sequences, and the last Close
// frees the device memory.
type devModel struct {
	mu      sync.Mutex
	refs    int
	d       backend
	cfg     model.Config
	rope    model.RopeAngles
	ropeSWA model.RopeAngles // gemma3's sliding-window layers' (rope elsewhere)
	pool    dptr
	plan    poolPlan
	embd    devWeight
	output  devWeight
	outNorm dptr
	factors dptr // 0 when the model has no rope_freqs
	layers  []devLayer

	maxBatch int
	scratch  dptr
	x, xn    dptr // [maxBatch*Embd] f32
	q, attn  dptr // [maxBatch*QDim]
	k, v     dptr // [maxBatch*KVDim]
	proj     dptr // [maxBatch*Embd]
	gate, up dptr // [maxBatch*FFN]
	x8       dptr // Q8 activations: [maxBatch*widest] int8
	xd       dptr // [maxBatch*widest/32] f32
	xs       dptr // [maxBatch*widest/32] int2
	table    dptr // the pass table (passTable), [tableBytes]
	logits   dptr // [maxBatch][Vocab] f32: the rows of a pass that want logits
	best     dptr // argmax result, int32

	// qwen3moe: the router's outputs [maxBatch][Experts] f32, the expert
	// table (per expert, the rows it serves [maxBatch]int32, then their
	// weights [maxBatch]f32), and an expert's gathered inputs
	// [maxBatch*Embd]; routerHost and tabHost are their host sides.
	router, moeTab, moeX dptr
	routerHost           []float32
	tabHost              []int32

	// scores is attention's scratch, [maxBatch*Heads][scorePositions]
	// f32, grown to the largest cache of any sequence in a pass.
	scores         dptr
	scorePositions int

	// graphs are the decode passes (every row wanting logits) recorded as
	// CUDA graphs, by row count: everything that changes from one such
	// pass to the next (tokens, positions, caches) is in the pass table on
	// the device, so a recording replays as it is until scores moves.
	// graphsOff says why passes are not recorded ("" when they are).
	graphs     map[int]graph
	graphsOff  string
	recordings int // passes recorded so far (tests)

	host passTable
}

// passTable is the host side of one pass's table, uploaded in one copy to
// devModel.table: tokens [maxBatch]int32 (the rows' tokens), sel
// [maxBatch]int32 (the rows whose logits are wanted, in order), then
// rows [maxBatch][4]int64, the row table of kernels/attention.cu (per
// row: its sequence's cache address, that cache's capacity, the row's
// position, 0).
type passTable struct {
	buf             []byte
	tokens, sel     []int32
	rows            []int64
	selOff, rowsOff int64
}

// newPassTable lays out the table for maxBatch rows.
func newPassTable(maxBatch int) passTable {
	t := passTable{selOff: 4 * int64(maxBatch), rowsOff: alignUp(8*int64(maxBatch), 8)}
	size := t.rowsOff + 32*int64(maxBatch)
	t.buf = make([]byte, size)
	t.tokens = unsafe.Slice((*int32)(unsafe.Pointer(&t.buf[0])), maxBatch)
	t.sel = unsafe.Slice((*int32)(unsafe.Pointer(&t.buf[t.selOff])), maxBatch)
	t.rows = unsafe.Slice((*int64)(unsafe.Pointer(&t.buf[t.rowsOff])), 4*maxBatch)
	return t
}

// gemvRows is GEMV_ROWS of kernels/gemv.cu: the activation rows one warp
// multiplies per read of its weight row.
const gemvRows = 8

var (
	_ forward.Sequence        = (*gpuSequence)(nil)
	_ forward.Prefiller       = (*gpuSequence)(nil)
	_ forward.Reserver        = (*gpuSequence)(nil)
	_ forward.BackendReporter = (*gpuSequence)(nil)
	_ forward.Batcher         = (*gpuSequence)(nil)
)

// errClosed is a call on a gpuSequence after its Close.
var errClosed = errors.New("cuda: sequence closed")

// newGPUSequence uploads m's weights to device opts.Device and returns the
// bare device step (no gate, no fallback).
//
// Errors: ErrUnsupportedArch (see checkArch); ErrUnavailable (no usable
// device); a *TensorError naming a tensor whose type has no kernel; an
// allocation, copy or JIT error.
func newGPUSequence(m *model.Model, opts Options) (*gpuSequence, error) {
	if err := checkArch(m.Config()); err != nil {
		return nil, err
	}
	w := m.Weights()
	tensors, err := poolTensors(m.Config(), w)
	if err != nil {
		return nil, err
	}
	plan, err := planPool(tensors)
	if err != nil {
		return nil, err
	}
	d, err := openBackend(opts.Device, opts.SyncEachLaunch)
	if err != nil {
		return nil, err
	}
	defer d.enter()()
	dm := &devModel{d: d, cfg: m.Config(), rope: m.RopeAngles(false), ropeSWA: m.RopeAngles(true), plan: plan, maxBatch: opts.BatchSize, refs: 1}
	if dm.maxBatch <= 0 {
		dm.maxBatch = 64
	}
	dm.host = newPassTable(dm.maxBatch)
	dm.graphs = map[int]graph{}
	switch {
	case opts.SyncEachLaunch:
		dm.graphsOff = "graphs: off (SyncEachLaunch)"
	case opts.NoGraphs:
		dm.graphsOff = "graphs: off (NoGraphs)"
	case dm.cfg.MoE():
		dm.graphsOff = "graphs: off (qwen3moe routes each layer's tokens on the host)"
	}
	s := &gpuSequence{devModel: dm, hostLogits: make([]float32, dm.cfg.Vocab)}
	if err := dm.upload(w); err != nil {
		s.release()
		return nil, err
	}
	if err := dm.allocScratch(); err != nil {
		s.release()
		return nil, err
	}
	if err := s.grow(min(256, dm.cfg.ContextLength)); err != nil {
		s.release()
		return nil, err
	}
	return s, nil
}

// newSequence is NewSequence for the gated Step.
func (s *gpuSequence) newSequence() (gpuBackend, error) { return s.NewSequence() }

// NewSequence returns another sequence over s's weights on the device: its
// own KV cache (sized as a new step's), nothing held. The weights are freed
// when the last sequence is closed.
//
// Errors: errClosed after s's Close; a device allocation error.
func (s *gpuSequence) NewSequence() (*gpuSequence, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errClosed
	}
	defer s.d.enter()()
	n := &gpuSequence{devModel: s.devModel, hostLogits: make([]float32, s.cfg.Vocab)}
	if err := n.grow(min(256, s.cfg.ContextLength)); err != nil {
		return nil, err
	}
	s.refs++
	return n, nil
}

// poolTensors lists every tensor of w in pool order: the matrices, then the
// f32 vectors (norm gains, biases, RoPE factors).
func poolTensors(c model.Config, w model.Weights) ([]poolTensor, error) {
	var ts []poolTensor
	mat := func(x model.Weight) {
		ts = append(ts, poolTensor{name: x.Name, typ: x.Type, rows: x.Rows, cols: x.Cols})
	}
	vec := func(name string, v []float32) {
		if v != nil {
			ts = append(ts, poolTensor{name: name, typ: quant.F32, rows: 1, cols: len(v)})
		}
	}
	mat(w.Embd)
	if w.Output.Name != w.Embd.Name {
		mat(w.Output)
	}
	for _, l := range w.Layers {
		for _, x := range layerMatrices(l) {
			mat(x)
		}
	}
	vec("output_norm.weight", w.OutNorm)
	vec(w.Output.Name+"#bias", w.Output.Bias)
	vec("rope_freqs.weight", w.RopeFactors)
	for i, l := range w.Layers {
		vec(fmt.Sprintf("blk.%d.attn_norm.weight", i), l.AttnNorm)
		vec(fmt.Sprintf("blk.%d.ffn_norm.weight", i), l.FFNNorm)
		vec(fmt.Sprintf("blk.%d.attn_q_norm.weight", i), l.QNorm)
		vec(fmt.Sprintf("blk.%d.attn_k_norm.weight", i), l.KNorm)
		vec(fmt.Sprintf("blk.%d.post_attention_norm.weight", i), l.AttnPostNorm)
		vec(fmt.Sprintf("blk.%d.post_ffw_norm.weight", i), l.FFNPostNorm)
		for _, x := range layerMatrices(l) {
			vec(x.Name+"#bias", x.Bias)
		}
	}
	return ts, nil
}

// layerMatrices is the weight matrices of layer l the pool holds: Q, K, V
// (or phi3's fused QKV), O, gate, up (phi3: gate and up fused) and down,
// or in a qwen3moe layer the router and the merged experts.
func layerMatrices(l model.LayerWeights) []model.Weight {
	var ws []model.Weight
	for _, x := range []model.Weight{l.Q, l.K, l.V, l.QKV, l.O, l.Gate, l.Up, l.Down, l.Router, l.GateExps, l.UpExps, l.DownExps} {
		if x.Name != "" {
			ws = append(ws, x)
		}
	}
	return ws
}

// rowsOf is rows [from, from+n) of w: a view of the same pool bytes (and
// of its bias), for the products of a fused tensor (phi3's attn_qkv, whose
// rows are Q's, K's then V's, and ffn_up, the gate's then up's).
func (w devWeight) rowsOf(from, n int) devWeight {
	v := w
	v.ptr += dptr(int64(from) * int64(w.rowBytes))
	v.rows = n
	if w.bias != 0 {
		v.bias += dptr(4 * int64(from))
	}
	return v
}

// upload allocates the pool and copies every tensor to its offset.
func (s *devModel) upload(w model.Weights) error {
	var err error
	if s.pool, err = s.d.alloc(s.plan.size, "weights"); err != nil {
		return err
	}
	at := map[string]dptr{}
	for _, p := range s.plan.tensors {
		at[p.name] = s.pool + dptr(p.offset)
	}
	copyBytes := func(name string, b []byte) error {
		if len(b) == 0 {
			return nil
		}
		if err := s.d.htod(at[name], unsafe.Pointer(&b[0]), int64(len(b))); err != nil {
			return fmt.Errorf("cuda: upload %s (%d bytes): %w", name, len(b), err)
		}
		return nil
	}
	vec := func(name string, v []float32) (dptr, error) {
		if v == nil {
			return 0, nil
		}
		return at[name], copyBytes(name, unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 4*len(v)))
	}
	mat := func(x model.Weight) (devWeight, error) {
		dw := devWeight{name: x.Name, typ: x.Type, ptr: at[x.Name], rows: x.Rows, cols: x.Cols}
		dw.rowBytes, _ = x.Type.RowSize(x.Cols)
		if err := copyBytes(x.Name, x.Data[:x.Rows*dw.rowBytes]); err != nil {
			return dw, err
		}
		dw.bias, err = vec(x.Name+"#bias", x.Bias)
		return dw, err
	}
	if s.embd, err = mat(w.Embd); err != nil {
		return err
	}
	if w.Output.Name == w.Embd.Name {
		s.output = s.embd
		if s.output.bias, err = vec(w.Output.Name+"#bias", w.Output.Bias); err != nil {
			return err
		}
	} else if s.output, err = mat(w.Output); err != nil {
		return err
	}
	if s.outNorm, err = vec("output_norm.weight", w.OutNorm); err != nil {
		return err
	}
	if s.factors, err = vec("rope_freqs.weight", w.RopeFactors); err != nil {
		return err
	}
	s.layers = make([]devLayer, len(w.Layers))
	for i, l := range w.Layers {
		dl := &s.layers[i]
		if dl.attnNorm, err = vec(fmt.Sprintf("blk.%d.attn_norm.weight", i), l.AttnNorm); err != nil {
			return err
		}
		if dl.ffnNorm, err = vec(fmt.Sprintf("blk.%d.ffn_norm.weight", i), l.FFNNorm); err != nil {
			return err
		}
		if dl.qNorm, err = vec(fmt.Sprintf("blk.%d.attn_q_norm.weight", i), l.QNorm); err != nil {
			return err
		}
		if dl.kNorm, err = vec(fmt.Sprintf("blk.%d.attn_k_norm.weight", i), l.KNorm); err != nil {
			return err
		}
		if dl.attnPostNorm, err = vec(fmt.Sprintf("blk.%d.post_attention_norm.weight", i), l.AttnPostNorm); err != nil {
			return err
		}
		if dl.ffnPostNorm, err = vec(fmt.Sprintf("blk.%d.post_ffw_norm.weight", i), l.FFNPostNorm); err != nil {
			return err
		}
		var qkv devWeight
		for _, p := range []struct {
			dst *devWeight
			src model.Weight
		}{{&dl.q, l.Q}, {&dl.k, l.K}, {&dl.v, l.V}, {&qkv, l.QKV}, {&dl.o, l.O}, {&dl.gate, l.Gate}, {&dl.up, l.Up}, {&dl.down, l.Down},
			{&dl.router, l.Router}, {&dl.gateExps, l.GateExps}, {&dl.upExps, l.UpExps}, {&dl.downExps, l.DownExps}} {
			if p.src.Name == "" {
				continue
			}
			if *p.dst, err = mat(p.src); err != nil {
				return err
			}
		}
		c := &s.cfg
		if qkv.rows != 0 {
			dl.q, dl.k, dl.v = qkv.rowsOf(0, c.QDim()), qkv.rowsOf(c.QDim(), c.KVDim()), qkv.rowsOf(c.QDim()+c.KVDim(), c.KVDim())
		}
		if c.FusedFFN {
			up := dl.up
			dl.gate, dl.up = up.rowsOf(0, c.FFN), up.rowsOf(c.FFN, c.FFN)
		}
	}
	return nil
}

// allocScratch makes the activation buffers for maxBatch tokens, in one
// allocation.
func (s *devModel) allocScratch() error {
	c, n := &s.cfg, int64(s.maxBatch)
	widest := int64(max(c.Embd, c.QDim(), c.FFN, c.ExpertFFN))
	ffn := int64(max(c.FFN, c.ExpertFFN))
	sizes := []struct {
		dst  *dptr
		size int64
	}{
		{&s.x, 4 * n * int64(c.Embd)}, {&s.xn, 4 * n * int64(c.Embd)},
		{&s.q, 4 * n * int64(c.QDim())}, {&s.attn, 4 * n * int64(c.QDim())},
		{&s.k, 4 * n * int64(c.KVDim())}, {&s.v, 4 * n * int64(c.KVDim())},
		{&s.proj, 4 * n * int64(c.Embd)},
		{&s.gate, 4 * n * ffn}, {&s.up, 4 * n * ffn},
		{&s.x8, n * widest}, {&s.xd, 4 * n * widest / 32}, {&s.xs, 8 * n * widest / 32},
		{&s.table, int64(len(s.host.buf))}, {&s.logits, 4 * n * int64(c.Vocab)}, {&s.best, 4},
		{&s.router, 4 * n * int64(c.Experts)}, {&s.moeTab, 8 * n * int64(c.Experts)}, {&s.moeX, 4 * n * int64(c.Embd)},
	}
	s.routerHost = make([]float32, n*int64(c.Experts))
	s.tabHost = make([]int32, 2*n*int64(c.Experts))
	var total int64
	for _, z := range sizes {
		total = alignUp(total+z.size, poolAlign)
	}
	var err error
	if s.scratch, err = s.d.alloc(total, "activations"); err != nil {
		return err
	}
	var off int64
	for _, z := range sizes {
		*z.dst = s.scratch + dptr(off)
		off = alignUp(off+z.size, poolAlign)
	}
	return nil
}

// grow reallocates the KV cache for positions, keeping the held positions
// (copied on the device).
func (s *gpuSequence) grow(positions int) error {
	c := &s.cfg
	kv := int64(c.KVDim()) * 2 // bytes per position of K (or V)
	cache, err := s.d.alloc(int64(c.Layers)*2*int64(positions)*kv, "KV cache")
	if err != nil {
		return err
	}
	if s.cache != 0 && s.held > 0 {
		for l := range c.Layers {
			for part := range 2 {
				src := s.layerCache(s.cache, s.capacity, l, part)
				dst := s.layerCache(cache, positions, l, part)
				if err := s.d.dtod(dst, src, int64(s.held)*kv); err != nil {
					s.d.free(&cache)
					return fmt.Errorf("cuda: copy KV cache: %w", err)
				}
			}
		}
	}
	// The old cache may still be read by queued kernels or the copy.
	if err := s.d.sync(); err != nil {
		s.d.free(&cache)
		return fmt.Errorf("cuda: copy KV cache: %w", err)
	}
	s.d.free(&s.cache)
	s.cache, s.capacity = cache, positions
	return nil
}

// growScores makes attention's scratch hold rows of positions scores.
func (s *devModel) growScores(positions int) error {
	if positions <= s.scorePositions {
		return nil
	}
	scores, err := s.d.alloc(4*int64(s.maxBatch)*int64(s.cfg.Heads)*int64(positions), "attention scores")
	if err != nil {
		return err
	}
	if err := s.d.sync(); err != nil { // queued attention may still use the old one
		s.d.free(&scores)
		return err
	}
	s.freeGraphs() // they read the old scratch
	s.d.free(&s.scores)
	s.scores, s.scorePositions = scores, positions
	return nil
}

// layerCache is the start of layer l's keys (part 0) or values (part 1) in
// a cache of capacity positions.
func (s *devModel) layerCache(base dptr, capacity, l, part int) dptr {
	per := int64(capacity) * int64(s.cfg.KVDim()) * 2
	return base + dptr((2*int64(l)+int64(part))*per)
}

// DeviceName is the driver's name of the GPU.
func (s *gpuSequence) DeviceName() string { return s.d.name() }

// DeviceInfo is what opening the device found and loaded, one line each:
// the device with its driver, compute capability and memory, each kernel
// family's JIT, the registers of every kernel; then whether decode passes
// replay as CUDA graphs. For logs.
func (s *gpuSequence) DeviceInfo() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append(append([]string(nil), s.d.describe()...), s.graphStatus())
}

// PoolBytes is the size of the pooled weight allocation.
func (s *gpuSequence) PoolBytes() int64 { return s.plan.size }

// Backend is ("cuda", true).
func (s *gpuSequence) Backend() (string, bool) { return "cuda", true }

// Reset forgets every held position.
func (s *gpuSequence) Reset() {
	s.mu.Lock()
	s.held = 0
	s.mu.Unlock()
}

// Reserve sizes the KV cache for positions (1 <= positions <=
// ContextLength). Growing reallocates the cache without copying: dropped
// reports that held positions were discarded. It never shrinks.
func (s *gpuSequence) Reserve(positions int) (dropped bool, err error) {
	if positions > s.cfg.ContextLength {
		return false, fmt.Errorf("cuda: reserve %d positions, context length %d: %w", positions, s.cfg.ContextLength, forward.ErrContextExceeded)
	}
	if positions < 1 {
		return false, fmt.Errorf("%w: reserve %d positions", model.ErrPosition, positions)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false, errClosed
	}
	if positions <= s.capacity {
		return false, nil
	}
	defer s.d.enter()()
	dropped = s.held > 0
	s.held = 0
	return dropped, s.grow(positions)
}

// Step processes token at position and returns the logits after it,
// [Vocab]float32, valid until the next call. Errors as model.Sequence.Step,
// plus device errors.
func (s *gpuSequence) Step(token int32, position int) ([]float32, error) {
	return s.run([]int32{token}, position, true)
}

// Prefill processes tokens[start:] in passes of up to Options.BatchSize
// tokens and returns the logits after the last one.
func (s *gpuSequence) Prefill(tokens []int32, start int) ([]float32, error) {
	if start < 0 || start >= len(tokens) {
		return nil, fmt.Errorf("%w: prefill from %d of %d tokens", model.ErrPosition, start, len(tokens))
	}
	return s.run(tokens[start:], start, true)
}

// Batch runs the rows of several sequences of s's upload (s among them
// or not) in shared passes: the rows of all of them go through the model
// together, up to Options.BatchSize rows a pass, so every weight matrix
// is read once per pass for up to gemvRows rows, not once per sequence.
// Each row's logits are those of its sequence alone, bit for bit: every
// kernel computes a row the same way whatever else is in the pass. A row
// fails alone, with Err set, when its step is not a gpuSequence of this
// upload or appears twice (model.ErrForeignSequence) or it fails Step's
// checks; a device error fails every row of the call, and their sequences
// hold nothing after it. Batch itself fails only after Close.
func (s *gpuSequence) Batch(rows []forward.Rows) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errClosed
	}
	spans := make([]span, 0, len(rows))
	idx := make([]int, 0, len(rows))
	for i := range rows {
		r := &rows[i]
		r.Out, r.Err = nil, nil
		st, ok := r.Sequence.(*gpuSequence)
		if r.Err = rowErr(rows, i, ok && st != nil && st.devModel == s.devModel, -1); r.Err != nil {
			continue
		}
		if r.Err = st.check(r.Tokens, r.Start); r.Err != nil {
			continue
		}
		spans = append(spans, span{seq: st, tokens: r.Tokens, start: r.Start, logits: r.Logits})
		idx = append(idx, i)
	}
	if len(spans) == 0 {
		return nil
	}
	defer s.d.enter()()
	err := s.forwardSpans(spans)
	for j, i := range idx {
		r := &rows[i]
		switch {
		case err != nil:
			r.Err = err
		case r.Logits:
			r.Out = spans[j].seq.hostLogits
		}
	}
	return nil
}

// span is one sequence's part of forwardSpans: tokens at positions
// start.., with the logits after the last one when logits.
type span struct {
	seq    *gpuSequence
	tokens []int32
	start  int
	logits bool
}

// check is why tokens cannot run at start on s, or nil: s is closed
// (errClosed), start is past what s holds (model.ErrPosition), the span
// ends past the context (forward.ErrContextExceeded) or a token is outside
// the vocabulary (forward.ErrBadToken). mu held.
func (s *gpuSequence) check(tokens []int32, start int) error {
	c := &s.cfg
	switch {
	case s.closed:
		return errClosed
	case start < 0 || start > s.held:
		return fmt.Errorf("%w: position %d with %d held", model.ErrPosition, start, s.held)
	case start+len(tokens) > c.ContextLength:
		return fmt.Errorf("cuda: position %d, context length %d: %w", start+len(tokens)-1, c.ContextLength, forward.ErrContextExceeded)
	}
	for _, t := range tokens {
		if t < 0 || int(t) >= c.Vocab {
			return fmt.Errorf("cuda: token %d, vocabulary %d: %w", t, c.Vocab, forward.ErrBadToken)
		}
	}
	return nil
}

// run checks a span, then forwards it; with logits it copies the last
// token's logits back.
func (s *gpuSequence) run(tokens []int32, start int, logits bool) ([]float32, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(tokens, start); err != nil {
		return nil, err
	}
	defer s.d.enter()()
	if err := s.forwardSpans([]span{{seq: s, tokens: tokens, start: start, logits: logits}}); err != nil {
		return nil, err
	}
	return s.hostLogits, nil
}

// forwardSpans runs spans (checked, on distinct sequences of this upload)
// through the model in passes of up to maxBatch rows, the spans' rows in
// order, a long span continuing in the next pass; it copies each span's
// logits, when wanted, to its sequence's hostLogits and waits for the
// device. Each sequence then holds its span's end. On an error no
// sequence of spans holds anything. mu held, device entered.
func (s *devModel) forwardSpans(spans []span) error {
	scorePositions := 0
	for _, sp := range spans {
		q := sp.seq
		q.held = min(q.held, sp.start)
		if end := sp.start + len(sp.tokens); end > q.capacity {
			if err := q.grow(min(max(end, 2*q.capacity), s.cfg.ContextLength)); err != nil {
				return s.dropAll(spans, err)
			}
		}
		q.held = 0 // unknown until the passes complete
		scorePositions = max(scorePositions, q.capacity)
	}
	if err := s.growScores(scorePositions); err != nil {
		return s.dropAll(spans, err)
	}
	t := &s.host
	vocab := int64(s.cfg.Vocab)
	var owners []*gpuSequence // the sequences whose logits the pass's sel rows are
	for i, off := 0, 0; i < len(spans); {
		n := 0
		owners = owners[:0]
		for n < s.maxBatch && i < len(spans) {
			sp := &spans[i]
			take := min(s.maxBatch-n, len(sp.tokens)-off)
			for k := range take {
				t.tokens[n+k] = sp.tokens[off+k]
				row := t.rows[4*(n+k):]
				row[0], row[1], row[2], row[3] = int64(sp.seq.cache), int64(sp.seq.capacity), int64(sp.start+off+k), 0
			}
			n, off = n+take, off+take
			if off == len(sp.tokens) {
				if sp.logits {
					t.sel[len(owners)] = int32(n - 1)
					owners = append(owners, sp.seq)
				}
				i, off = i+1, 0
			}
		}
		if err := s.d.htod(s.table, unsafe.Pointer(&t.buf[0]), int64(len(t.buf))); err != nil {
			return s.dropAll(spans, fmt.Errorf("cuda: copy the pass table: %w", err))
		}
		if err := s.pass(n, len(owners)); err != nil {
			return s.dropAll(spans, err)
		}
		for j, q := range owners {
			if err := s.d.dtoh(unsafe.Pointer(&q.hostLogits[0]), s.logits+dptr(4*int64(j)*vocab), 4*vocab); err != nil {
				return s.dropAll(spans, fmt.Errorf("cuda: copy logits: %w", err))
			}
		}
	}
	if err := s.d.sync(); err != nil {
		return s.dropAll(spans, fmt.Errorf("cuda: forward on %s: %w", s.d.name(), err))
	}
	for _, sp := range spans {
		sp.seq.held = sp.start + len(sp.tokens)
	}
	return nil
}

// pass queues forward(n, m): a decode pass (m == n) by replaying the
// graph recorded for n rows, recorded at its first use; any other pass,
// or every pass once recording has failed (graphsOff then says why),
// launch by launch. mu held, device entered.
func (s *devModel) pass(n, m int) error {
	if m != n || s.graphsOff != "" {
		return s.forward(n, m)
	}
	g, ok := s.graphs[n]
	if !ok {
		var err error
		if g, err = s.d.capture(func() error { return s.forward(n, m) }); err != nil {
			s.graphsOff = fmt.Sprintf("graphs: off (recording a %d-row pass failed: %v)", n, err)
			return s.forward(n, m)
		}
		s.graphs[n] = g
		s.recordings++
	}
	return s.d.runGraph(g)
}

// freeGraphs releases every recorded pass.
func (s *devModel) freeGraphs() {
	for n, g := range s.graphs {
		s.d.freeGraph(g)
		delete(s.graphs, n)
	}
}

// graphStatus is one line on the recorded passes, for DeviceInfo.
func (s *devModel) graphStatus() string {
	if s.graphsOff != "" {
		return s.graphsOff
	}
	return fmt.Sprintf("graphs: on (%d decode pass shapes recorded)", len(s.graphs))
}

// dropAll leaves every sequence of spans holding nothing and returns err.
func (s *devModel) dropAll(spans []span, err error) error {
	for _, sp := range spans {
		sp.seq.held = 0
	}
	return err
}

// Argmax returns the index of the largest logit of the last forward of
// s's upload (any of its sequences': call it right after s's own),
// computed on the device (4 bytes copied back).
func (s *gpuSequence) Argmax() (int32, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, errClosed
	}
	defer s.d.enter()()
	if err := s.d.launch("argmax", 1, 1, 1024, 1, ptr(s.logits), i64(s.cfg.Vocab), ptr(s.best)); err != nil {
		return 0, err
	}
	var best int32
	if err := s.d.dtoh(unsafe.Pointer(&best), s.best, 4); err != nil {
		return 0, err
	}
	if err := s.d.sync(); err != nil {
		return 0, err
	}
	return best, nil
}

// Close frees this sequence's KV cache; the last sequence of an upload to
// close frees the weights and the scratch and releases the context. A
// second Close does nothing.
func (s *gpuSequence) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	defer s.d.enter()()
	s.release()
	return nil
}

// release frees the sequence's cache and, with the last reference, the
// upload (mu held, or the step not yet shared).
func (s *gpuSequence) release() {
	s.closed = true
	_ = s.d.sync()
	s.d.free(&s.cache)
	s.refs--
	if s.refs > 0 {
		return
	}
	s.freeGraphs()
	s.d.free(&s.pool)
	s.d.free(&s.scratch)
	s.d.free(&s.scores)
	s.d.close()
}

// ropeKernel is the RoPE kernel of the model's pairing.
func (s *devModel) ropeKernel() string {
	if s.cfg.RopeType == model.RopeNeox {
		return "rope_neox"
	}
	return "rope_norm"
}

// forward queues one pass of n rows through the model, as the pass table
// (already copied to the device) describes them: the rows' tokens, their
// sequences' caches and positions. It leaves the logits after the m rows
// of sel in logits[0..m). Nothing waits.
func (s *devModel) forward(n, m int) error {
	c, d := &s.cfg, s.d
	tokens := s.table
	sel := s.table + dptr(s.host.selOff)
	rows := s.table + dptr(s.host.rowsOff)
	embd, qDim, kvDim := c.Embd, c.QDim(), c.KVDim()
	l := launcher{d: d}
	l.run("embed_"+kernelTypes[s.embd.typ], ceilDiv(embd, 32), n, 32, 1,
		ptr(s.embd.ptr), i64(s.embd.rowBytes), i64(embd), ptr(tokens), ptr(s.x))
	if c.EmbdScale != 0 {
		l.run("scale", ceilDiv(n*embd, 256), 1, 256, 1, ptr(s.x), f32(c.EmbdScale), i64(n*embd))
	}
	scale := float32(1 / math.Sqrt(float64(c.HeadDim)))
	if c.ScaleQ {
		// phi3, gemma3: the CPU scales the rotated Q by QueryScale and
		// not the scores; here the scores are scaled by it (the same
		// product, rounded once more or less).
		scale = c.QueryScale
	}
	for i := range s.layers {
		ly := &s.layers[i]

		// x += Wo · attention(rope(Wq·norm(x)), rope(Wk·norm(x)), Wv·norm(x))
		l.run("rmsnorm", n, 1, 256, 1, ptr(s.x), ptr(ly.attnNorm), ptr(s.xn), i64(embd), f32(c.RMSEps))
		s.matmul(&l, s.xn, embd, n, gemvJob{&ly.q, s.q}, gemvJob{&ly.k, s.k}, gemvJob{&ly.v, s.v})
		if ly.qNorm != 0 {
			// qwen3, gemma3: every head of Q and K RMS-normalized over HeadDim
			// (rmsnorm with one block per head).
			l.run("rmsnorm", n*c.Heads, 1, 256, 1, ptr(s.q), ptr(ly.qNorm), ptr(s.q), i64(c.HeadDim), f32(c.RMSEps))
			l.run("rmsnorm", n*c.KVHeads, 1, 256, 1, ptr(s.k), ptr(ly.kNorm), ptr(s.k), i64(c.HeadDim), f32(c.RMSEps))
		}
		rp, factors, window := &s.rope, s.factors, 0
		if c.Sliding(i) {
			// gemma3: a sliding layer's own RoPE, and its window.
			rp, window = &s.ropeSWA, c.SlidingWindow
		}
		if rp.Factors == nil {
			factors = 0
		}
		for _, r := range []struct {
			x     dptr
			heads int
		}{{s.q, c.Heads}, {s.k, c.KVHeads}} {
			l.run(s.ropeKernel(), r.heads, n, ceilDiv(rp.Dims/2, 32)*32, 1, ptr(r.x), i64(r.heads), i64(c.HeadDim), ptr(rows),
				i64(rp.Dims), f32(rp.ThetaScale), f32(rp.FreqScale), ptr(factors),
				f32(rp.MScale), i64(b2i(rp.YaRN)), f32(rp.CorrDims[0]), f32(rp.CorrDims[1]))
		}
		l.run("kv_write", ceilDiv(kvDim, 256), n, 256, 1, ptr(s.k), ptr(s.v), ptr(rows), i64(i), i64(kvDim))
		l.run("attention", c.Heads, n, 128, 1, ptr(s.q), ptr(rows), i64(i), ptr(s.attn), ptr(s.scores),
			i64(c.Heads), i64(c.KVHeads), i64(c.HeadDim), i64(s.scorePositions), f32(scale), i64(window))
		s.matmul(&l, s.attn, qDim, n, gemvJob{&ly.o, s.proj})
		s.postNorm(&l, ly.attnPostNorm, n)
		l.run("add", ceilDiv(n*embd, 256), 1, 256, 1, ptr(s.x), ptr(s.proj), i64(n*embd))

		// x += Wdown · (silu(Wgate·norm(x)) * Wup·norm(x))
		l.run("rmsnorm", n, 1, 256, 1, ptr(s.x), ptr(ly.ffnNorm), ptr(s.xn), i64(embd), f32(c.RMSEps))
		if ly.router.rows != 0 {
			s.moeFFN(&l, ly, n)
			continue
		}
		s.matmul(&l, s.xn, embd, n, gemvJob{&ly.gate, s.gate}, gemvJob{&ly.up, s.up})
		act := "swiglu"
		if c.GELU {
			act = "geglu" // gemma3
		}
		l.run(act, ceilDiv(n*c.FFN, 256), 1, 256, 1, ptr(s.gate), ptr(s.up), i64(n*c.FFN))
		s.matmul(&l, s.gate, c.FFN, n, gemvJob{&ly.down, s.proj})
		s.postNorm(&l, ly.ffnPostNorm, n)
		l.run("add", ceilDiv(n*embd, 256), 1, 256, 1, ptr(s.x), ptr(s.proj), i64(n*embd))
	}
	if m > 0 {
		// The output head on the rows whose logits are wanted only.
		l.run("gather_rows", ceilDiv(embd, 256), m, 256, 1, ptr(s.x), ptr(sel), ptr(s.proj), i64(embd))
		l.run("rmsnorm", m, 1, 256, 1, ptr(s.proj), ptr(s.outNorm), ptr(s.xn), i64(embd), f32(c.RMSEps))
		s.matmul(&l, s.xn, embd, m, gemvJob{&s.output, s.logits})
		if c.LogitSoftcap != 0 {
			l.run("softcap", ceilDiv(m*c.Vocab, 256), 1, 256, 1, ptr(s.logits), f32(c.LogitSoftcap), i64(m*c.Vocab))
		}
	}
	return l.err
}

// moeFFN is a qwen3moe layer's feed-forward on the n rows of xn, added to
// x: the router's product, copied back and routed on the host as the CPU
// forward routes (model.RouteExperts: the pass waits for the device here,
// which is why such passes are not recorded as graphs); then, for each
// expert some row chose, its rows gathered, its gate and up products (row
// views of the merged tensors), SwiGLU, its down product, and its output
// times each row's weight added to that row's residual (moe_add).
func (s *devModel) moeFFN(l *launcher, ly *devLayer, n int) {
	c, d := &s.cfg, s.d
	ne, k, ff, embd := c.Experts, c.ExpertsUsed, c.ExpertFFN, c.Embd
	s.matmul(l, s.xn, embd, n, gemvJob{&ly.router, s.router})
	if l.err != nil {
		return
	}
	if l.err = d.dtoh(unsafe.Pointer(&s.routerHost[0]), s.router, 4*int64(n*ne)); l.err == nil {
		l.err = d.sync()
	}
	if l.err != nil {
		l.err = fmt.Errorf("cuda: copy the router's outputs: %w", l.err)
		return
	}
	mb := s.maxBatch
	served := make([]int, ne)
	sel, w := make([]int32, k), make([]float32, k)
	for b := range n {
		model.RouteExperts(sel, w, s.routerHost[b*ne:(b+1)*ne])
		for j, e := range sel {
			at := 2*int(e)*mb + served[e]
			s.tabHost[at] = int32(b)
			s.tabHost[at+mb] = int32(math.Float32bits(w[j]))
			served[e]++
		}
	}
	if l.err = d.htod(s.moeTab, unsafe.Pointer(&s.tabHost[0]), 8*int64(ne*mb)); l.err != nil {
		l.err = fmt.Errorf("cuda: copy the expert table: %w", l.err)
		return
	}
	for e, g := range served {
		if g == 0 {
			continue
		}
		rows := s.moeTab + dptr(8*int64(e*mb))
		weights := rows + dptr(4*int64(mb))
		gate, up, down := ly.gateExps.rowsOf(e*ff, ff), ly.upExps.rowsOf(e*ff, ff), ly.downExps.rowsOf(e*embd, embd)
		l.run("gather_rows", ceilDiv(embd, 256), g, 256, 1, ptr(s.xn), ptr(rows), ptr(s.moeX), i64(embd))
		s.matmul(l, s.moeX, embd, g, gemvJob{&gate, s.gate}, gemvJob{&up, s.up})
		l.run("swiglu", ceilDiv(g*ff, 256), 1, 256, 1, ptr(s.gate), ptr(s.up), i64(g*ff))
		s.matmul(l, s.gate, ff, g, gemvJob{&down, s.proj})
		l.run("moe_add", ceilDiv(embd, 256), g, 256, 1, ptr(s.x), ptr(s.proj), ptr(rows), ptr(weights), i64(embd))
	}
}

// postNorm queues gemma3's RMSNorm of a sublayer's output (proj, n rows)
// by gains w before the residual add; nothing when w is 0.
func (s *devModel) postNorm(l *launcher, w dptr, n int) {
	if w != 0 {
		l.run("rmsnorm", n, 1, 256, 1, ptr(s.proj), ptr(w), ptr(s.proj), i64(s.cfg.Embd), f32(s.cfg.RMSEps))
	}
}

// b2i is 1 for true, 0 for false (a kernel's flag).
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// gemvJob is one product out = W·in (+ bias) over the batch.
type gemvJob struct {
	w   *devWeight
	out dptr
}

// matmul queues the products of jobs that share the input in ([n][cols]
// f32): the float weights on in itself, then, per activation encoding
// (actEncoder) any job needs, the encoding of in into the Q8 buffers and
// the products of the jobs that take it. The stream runs them in order, so
// the buffers are reused safely.
func (s *devModel) matmul(l *launcher, in dptr, cols, n int, jobs ...gemvJob) {
	for _, enc := range []string{"", "quantize_q8k", "quantize_q8"} {
		encoded := false
		for _, j := range jobs {
			w := j.w
			if kernel, values := actEncoder(w.typ); kernel != enc {
				continue
			} else if enc != "" && !encoded {
				l.run(kernel, cols/values, n, 32, 1, ptr(in), ptr(s.x8), ptr(s.xd), ptr(s.xs), i64(cols))
				encoded = true
			}
			name := "gemv_" + kernelTypes[w.typ]
			gx, gy := ceilDiv(w.rows, 4), ceilDiv(n, gemvRows)
			if enc == "" {
				l.run(name, gx, gy, 32, 4, ptr(w.ptr), i64(w.rowBytes), i64(w.rows), i64(w.cols), i64(n),
					ptr(in), ptr(w.bias), ptr(j.out))
			} else {
				l.run(name, gx, gy, 32, 4, ptr(w.ptr), i64(w.rowBytes), i64(w.rows), i64(w.cols), i64(n),
					ptr(s.x8), ptr(s.xd), ptr(s.xs), ptr(w.bias), ptr(j.out))
			}
		}
	}
}

// launcher queues kernels, keeping the first error.
type launcher struct {
	d   backend
	err error
}

func (l *launcher) run(name string, gx, gy, bx, by int, args ...arg) {
	if l.err == nil {
		l.err = l.d.launch(name, gx, gy, bx, by, args...)
	}
}

// actEncoder is the kernel that encodes the activations a weight of type t
// is multiplied with, as the CPU forward encodes them (quant.VecDotType):
// quantize_q8k (Q8_K) for the K-quants, quantize_q8 (Q8_0) for the other
// integer types (Q4_1 and Q5_1, which the CPU multiplies with Q8_1, get
// the same quants but the half sums in place of Q8_1's f16 sum: their
// products differ from the CPU's by up to 1e-4 of the sum of |terms|, the
// others' by float rounding); "" for the
// float types. values is how many activations one warp encodes (the grid
// is cols/values by n).
func actEncoder(t quant.Type) (kernel string, values int) {
	switch {
	case floatType(t):
		return "", 0
	case t.VecDotType() == quant.Q8_K:
		return "quantize_q8k", 256
	}
	return "quantize_q8", 32
}
