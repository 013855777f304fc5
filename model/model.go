package model

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/realizar-host/realizar-host/gguf"
	"github.com/realizar-host/realizar-host/internal/quant"
)

// Options tunes a Model. The zero value is valid.
type Options struct {
	// Threads is the number of goroutines matrix products are split across,
	// the calling one included. 0 means runtime.GOMAXPROCS(0).
	Threads int
	// BatchSize is the most tokens one Prefill pass processes together;
	// longer spans run in several passes. 0 means 64. Scratch memory grows
	// with it (about BatchSize*(4*Embd + 3*FFN) float32 per Step; for a
	// mixture of experts FFN is 2*ExpertFFN and ExpertsUsed*Embd more;
	// phi3's fused projections take QDim+2*KVDim and 2*FFN more).
	BatchSize int
	// ContextSize is the context one sequence will run at, in positions
	// (llama.cpp's n_ctx_seq); 0 means ContextLength. It only chooses
	// phi3's LongRoPE factors, as llama.cpp does: rope_factors_long when
	// ContextSize rounded up to a multiple of 256 (llama.cpp pads n_ctx so)
	// exceeds RopeOrigCtx, else rope_factors_short.
	ContextSize int
}

// Model is a loaded llama, qwen2, qwen3, qwen3moe, phi3 or gemma3 model: its config and views
// of its weights. It is read-only and safe for concurrent use by many Steps.
type Model struct {
	cfg       Config
	embd      linear // token_embd.weight: row t is token t's embedding
	layers    []layer
	outNorm   []float32
	output    linear // output.weight, or token_embd.weight when tied
	tied      bool
	rope      rope
	ropeSWA   rope   // gemma3's sliding layers: RopeBaseSWA, unscaled
	ropeFrom  string // the tensor rope's factors come from, or "" for none
	fusedQKV  bool   // some layer has attn_qkv
	pool      *pool
	slab      []byte // every product matrix's panels or rows (packMatrices)
	batchSize int

	// batchSeq is the scratch of Batch passes, made on first use;
	// batchMu serializes them.
	batchMu  sync.Mutex
	batchSeq *Sequence
}

// layer is one transformer block's weights.
type layer struct {
	attnNorm       []float32 // [Embd]
	q, k, v, o     linear
	qkv            linear    // phi3's fused attn_qkv (Q, K, V rows in turn); unset when q, k, v are separate
	qNorm, kNorm   []float32 // [HeadDim] per-head Q/K gains (QKNorm), else nil
	ffnNorm        []float32 // [Embd]
	gate, up, down linear    // dense SwiGLU or GELU (FusedFFN: up holds gate then up rows, gate unset); unset in a MoE layer
	moe            *moeLayer // router and experts (Config.MoE), else nil
	// gemma3's post_attention_norm and post_ffw_norm gains ([Embd]), else nil.
	attnPostNorm, ffnPostNorm []float32
}

// Config returns the model's hyperparameters.
func (m *Model) Config() Config { return m.cfg }

// KVBytesPerPosition is the KV cache one position takes across all layers,
// in bytes: keys and values of KVDim f16 values per layer.
func (m *Model) KVBytesPerPosition() int64 { return int64(m.cfg.Layers) * int64(m.cfg.KVDim()) * 2 * 2 }

// TiedOutput reports whether the output head reuses token_embd.weight
// (the file has no output.weight).
func (m *Model) TiedOutput() bool { return m.tied }

// Close stops the worker pool's goroutines; Steps still work afterwards, on
// their calling goroutine alone. The caller still owns the GGUF file and
// closes it after the Model (its weights are views of the file).
func (m *Model) Close() error {
	m.pool.close()
	return nil
}

// tensorSource is what Load needs of a GGUF file.
type tensorSource interface {
	metadata
	// tensor returns a tensor's dims (ggml order, dims[0] the row length),
	// type and data; an absent tensor is an error wrapping ErrMissingTensor.
	tensor(name string) (dims []int64, typ quant.Type, data []byte, err error)
}

// load builds a Model from src. See Load.
func load(src tensorSource, opts Options) (*Model, error) {
	cfg, err := decodeConfig(src)
	if err != nil {
		return nil, err
	}
	l := loader{src: src}
	m := &Model{batchSize: opts.BatchSize}
	if m.batchSize <= 0 {
		m.batchSize = 64
	}

	// The vocabulary is the embedding's row count.
	dims, _, _, err := src.tensor(tensorTokenEmbd)
	if err != nil {
		return nil, err
	}
	if len(dims) != 2 || dims[1] < 1 || dims[1] > 1<<24 {
		return nil, &TensorError{Tensor: tensorTokenEmbd, Err: ErrShape, Detail: fmt.Sprintf("dims %v, want [%d n_vocab]", dims, cfg.Embd)}
	}
	cfg.Vocab = int(dims[1])
	key := gguf.ArchKey(cfg.Arch, gguf.SuffixVocabSize)
	if v, err := src.Uint32(key); err == nil && int(v) != cfg.Vocab {
		return nil, configErr(key, "%s = %d but %s has %d rows", key, v, tensorTokenEmbd, cfg.Vocab)
	}
	m.cfg = cfg

	m.embd = l.matrix(tensorTokenEmbd, cfg.Vocab, cfg.Embd)
	m.outNorm = l.vector(tensorOutputNorm, cfg.Embd, true)
	if _, _, _, err := src.tensor(tensorOutput); errors.Is(err, ErrMissingTensor) {
		m.output, m.tied = m.embd, true
	} else {
		m.output = l.matrix(tensorOutput, cfg.Vocab, cfg.Embd)
	}
	m.output.bias = l.vector(tensorOutputBias, cfg.Vocab, false)

	// Layers are appended one by one so that a block_count the file does
	// not back with tensors fails at its first missing tensor, not with a
	// huge allocation.
	for i := 0; i < cfg.Layers && l.err == nil; i++ {
		m.layers = append(m.layers, l.layer(i, &cfg))
	}
	for _, ly := range m.layers {
		m.fusedQKV = m.fusedQKV || ly.qkv.data != nil
	}
	m.ropeFrom = tensorRopeFreqs
	switch {
	case cfg.phi3(): // LongRoPE
		m.ropeFrom = longRoPEFactors(cfg, opts.ContextSize)
	case cfg.gemma3(): // llama.cpp's gemma3 graph passes no factors
		m.ropeFrom = ""
	}
	var factors []float32
	if m.ropeFrom != "" {
		factors = l.vector(m.ropeFrom, cfg.RopeDims/2, false)
	}
	if l.err != nil {
		return nil, l.err
	}
	if factors == nil {
		m.ropeFrom = ""
	}
	m.rope = newRope(ropeParams{kind: cfg.RopeType, dims: cfg.RopeDims, base: cfg.RopeBase, freqScale: cfg.RopeFreqScale,
		attnFactor: cfg.RopeAttnFactor, yarn: cfg.RopeYaRN, origCtx: cfg.RopeOrigCtx}, factors)
	if cfg.SlidingLayers != nil {
		// llama.cpp: a sliding layer's RoPE takes rope_freq_base_train_swa
		// and rope_freq_scale_train_swa (1: never scaled); the rest of its
		// RoPE (YaRN's ext_factor, attn_factor) is the context's.
		m.ropeSWA = newRope(ropeParams{kind: cfg.RopeType, dims: cfg.RopeDims, base: cfg.RopeBaseSWA, freqScale: 1,
			attnFactor: cfg.RopeAttnFactor, yarn: cfg.RopeYaRN, origCtx: cfg.RopeOrigCtx}, nil)
	}

	threads := opts.Threads
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	m.pool = newPool(threads)
	m.packMatrices(src, threads)
	return m, nil
}

// products lists every matrix the forward multiplies with (unset ones
// included: their data is nil).
func (m *Model) products() []*linear {
	ps := []*linear{&m.output}
	for i := range m.layers {
		ly := &m.layers[i]
		ps = append(ps, &ly.q, &ly.k, &ly.v, &ly.o, &ly.qkv, &ly.gate, &ly.up, &ly.down)
		if ly.moe != nil {
			ps = append(ps, &ly.moe.router)
			for e := range ly.moe.exps {
				ex := &ly.moe.exps[e]
				ps = append(ps, &ex.gate, &ex.up, &ex.down)
			}
		}
	}
	return ps
}

// pageReleaser is a tensorSource whose tensor bytes can be given back to
// the operating system once copied (a mapped GGUF file).
type pageReleaser interface{ releasePages(b []byte) }

// packMatrices copies every product matrix into one allocation (the
// slab, panelSlab), on up to threads goroutines: as panels where the panel
// kernels can multiply it (linear.pack), as its rows otherwise
// (linear.keep). It gives each matrix's file pages back to the operating
// system as soon as it is copied, where src can, so the process never
// holds much of the weights twice. The token embedding stays in the file
// (a tied output head is copied, and its rows are still looked up there,
// paged in again as needed).
//
// Each matrix starts at a multiple of 64 bytes of the slab, which is
// backed by transparent huge pages where the system gives them: a decode
// step streams every matrix once, and with the file's 4 KiB pages it took
// a TLB miss every 4 KiB of it.
func (m *Model) packMatrices(src tensorSource, threads int) {
	type job struct {
		l    *linear
		f    quant.DotPanelFunc // nil: keep the rows
		p    []byte
		size int
	}
	var jobs []job
	total := 0
	for _, l := range m.products() {
		if l.panels != nil || l.data == nil {
			continue
		}
		j := job{l: l, size: len(l.data)}
		if f, size, ok := l.panelLayout(); ok {
			j.f, j.size = f, size
		}
		jobs = append(jobs, j)
		total += (j.size + 63) &^ 63
	}
	if len(jobs) == 0 {
		return
	}
	slab := panelSlab(total)
	m.slab = slab
	for i := range jobs {
		jobs[i].p, slab = slab[:jobs[i].size:jobs[i].size], slab[(jobs[i].size+63)&^63:]
	}
	r, _ := src.(pageReleaser)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range max(threads, 1) {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(jobs) {
					return
				}
				j := &jobs[i]
				file := j.l.data
				if j.f != nil {
					if !j.l.pack(j.p, j.f) {
						continue // keeps the file's rows
					}
				} else {
					j.l.keep(j.p)
				}
				if r != nil {
					r.releasePages(file)
				}
			}
		})
	}
	wg.Wait()
}

// hugePage is the size of a transparent huge page on x86-64 (and arm64
// with 4 KiB base pages).
const hugePage = 2 << 20

// panelSlab returns size bytes that start on a huge-page boundary, advised
// to be backed by transparent huge pages (adviseHuge) before anything
// writes them.
func panelSlab(size int) []byte {
	b := make([]byte, size+hugePage)
	off := int(-uintptr(unsafe.Pointer(unsafe.SliceData(b))) & (hugePage - 1))
	b = b[off : off+size : off+size]
	adviseHuge(b)
	return b
}

// longRoPEFactors is llama.cpp's get_rope_factors for phi3, which reads no
// rope_freqs: rope_factors_long when the context per sequence (contextSize,
// or ContextLength when 0, padded to a multiple of 256 as llama.cpp pads
// n_ctx) exceeds RopeOrigCtx, else rope_factors_short. An absent tensor
// means no factors.
func longRoPEFactors(c Config, contextSize int) string {
	n := contextSize
	if n <= 0 {
		n = c.ContextLength
	}
	if (n+255)/256*256 > c.RopeOrigCtx {
		return tensorRopeLong
	}
	return tensorRopeShort
}

// RopeFactors names the tensor whose values divide each RoPE pair's angle
// (rope_freqs.weight, or phi3's rope_factors_long.weight or
// rope_factors_short.weight as Options.ContextSize chose), or "" when none
// does (always for gemma3, whose graph in llama.cpp takes no factors).
func (m *Model) RopeFactors() string { return m.ropeFrom }

// loader reads tensors, remembering the first error.
type loader struct {
	src tensorSource
	err error
}

func (l *loader) layer(i int, c *Config) layer {
	n := func(format string) string { return fmt.Sprintf(format, i) }
	ly := layer{attnNorm: l.vector(n(tensorAttnNorm), c.Embd, true)}
	qkvDim := c.QDim() + 2*c.KVDim()
	if c.phi3() && l.has(n(tensorAttnQKV)) {
		// phi3: one product for Q, K and V, split by rows afterwards.
		ly.qkv = l.matrix(n(tensorAttnQKV), qkvDim, c.Embd)
	} else {
		ly.q = l.matrix(n(tensorAttnQ), c.QDim(), c.Embd)
		ly.k = l.matrix(n(tensorAttnK), c.KVDim(), c.Embd)
		ly.v = l.matrix(n(tensorAttnV), c.KVDim(), c.Embd)
	}
	ly.o = l.matrix(n(tensorAttnOut), c.Embd, c.QDim())
	ly.ffnNorm = l.vector(n(tensorFFNNorm), c.Embd, true)
	switch {
	case c.MoE():
		ly.moe = l.moeLayer(i, c)
	case c.FusedFFN:
		ly.up = l.matrix(n(tensorFFNUp), 2*c.FFN, c.Embd)
		ly.down = l.matrix(n(tensorFFNDown), c.Embd, c.FFN)
	default:
		ly.gate = l.matrix(n(tensorFFNGate), c.FFN, c.Embd)
		ly.up = l.matrix(n(tensorFFNUp), c.FFN, c.Embd)
		ly.down = l.matrix(n(tensorFFNDown), c.Embd, c.FFN)
	}
	if c.QKNorm {
		ly.qNorm = l.vector(n(tensorAttnQN), c.HeadDim, true)
		ly.kNorm = l.vector(n(tensorAttnKN), c.HeadDim, true)
	}
	if c.PostNorms {
		ly.attnPostNorm = l.vector(n(tensorAttnPostNorm), c.Embd, true)
		ly.ffnPostNorm = l.vector(n(tensorFFNPostNorm), c.Embd, true)
	}
	qb := l.vector(n(tensorAttnQB), c.QDim(), false)
	kb := l.vector(n(tensorAttnKB), c.KVDim(), false)
	vb := l.vector(n(tensorAttnVB), c.KVDim(), false)
	if ly.qkv.data != nil {
		// llama.cpp: attn_qkv.bias, else the three separate biases
		// together (or none).
		ly.qkv.bias = l.vector(n(tensorAttnQKVB), qkvDim, false)
		if ly.qkv.bias == nil && qb != nil && kb != nil && vb != nil {
			ly.qkv.bias = append(append(qb, kb...), vb...)
		}
	} else {
		ly.q.bias, ly.k.bias, ly.v.bias = qb, kb, vb
	}
	if c.phi3() || c.gemma3() {
		return ly // phi3's and gemma3's attn_output and FFN have no biases in llama.cpp
	}
	ly.o.bias = l.vector(n(tensorAttnOutB), c.Embd, false)
	if !c.MoE() {
		ly.gate.bias = l.vector(n(tensorFFNGateB), c.FFN, false)
		ly.up.bias = l.vector(n(tensorFFNUpB), c.FFN, false)
		ly.down.bias = l.vector(n(tensorFFNDownB), c.Embd, false)
	}
	return ly
}

// has reports whether the file has tensor name.
func (l *loader) has(name string) bool {
	if l.err != nil {
		return false
	}
	_, _, _, err := l.src.tensor(name)
	return err == nil || !errors.Is(err, ErrMissingTensor)
}

// matrix loads a [rows][cols] weight (GGUF dims [cols rows]) as a view.
func (l *loader) matrix(name string, rows, cols int) linear {
	if l.err != nil {
		return linear{}
	}
	dims, typ, data, err := l.src.tensor(name)
	if err != nil {
		l.err = err
		return linear{}
	}
	if len(dims) != 2 || dims[0] != int64(cols) || dims[1] != int64(rows) {
		l.err = &TensorError{Tensor: name, Err: ErrShape, Detail: fmt.Sprintf("dims %v, want [%d %d]", dims, cols, rows)}
		return linear{}
	}
	w, err := newLinear(name, typ, rows, cols, data)
	if err != nil {
		l.err = err
	}
	return w
}

// vector decodes a [n] tensor of any type to f32. An absent optional
// vector is nil.
func (l *loader) vector(name string, n int, required bool) []float32 {
	if l.err != nil {
		return nil
	}
	dims, typ, data, err := l.src.tensor(name)
	if err != nil {
		if !required && errors.Is(err, ErrMissingTensor) {
			return nil
		}
		l.err = err
		return nil
	}
	if len(dims) != 1 || dims[0] != int64(n) {
		l.err = &TensorError{Tensor: name, Err: ErrShape, Detail: fmt.Sprintf("dims %v, want [%d]", dims, n)}
		return nil
	}
	v := make([]float32, n)
	if err := quant.Dequantize(typ, v, data); err != nil {
		l.err = &TensorError{Tensor: name, Err: ErrUnsupportedType, Detail: err.Error()}
		return nil
	}
	return v
}
