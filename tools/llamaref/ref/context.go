package ref

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"github.com/hybridgroup/yzma/pkg/llama"
)

// ErrContext reports that llama.cpp could not create or run a context.
var ErrContext = errors.New("llama.cpp context failed")

// ErrTooLong reports a request that needs more positions than n_ctx.
var ErrTooLong = errors.New("sequence longer than the context")

// ContextConfig pins a reference context. Zero fields take the defaults.
// Whatever the config, the context uses an f16 KV cache, flash attention
// off, one sequence and the CPU only, so that its numbers are reproducible.
type ContextConfig struct {
	// NCtx is the context length in tokens. Default 512.
	NCtx int
	// NBatch is the most tokens per llama_decode call (logical and physical
	// batch alike). Default NCtx.
	NBatch int
	// Threads is the thread count for single-token decode and for batches.
	// Default 1: ggml's CPU threads busy-wait at every barrier, so on a
	// machine shared with other work 2 threads can be 100x slower than 1
	// (60 greedy tokens of stories260K: 0.05 s with 1 thread, 7 to 19 s with
	// 2 on a loaded 2-core host). The logits do not depend on it (each output
	// value is computed by one thread). Benchmarks set it explicitly.
	Threads int
	// SleepIdle gives the context its own ggml thread pool whose idle
	// threads sleep (poll level 0) instead of busy-waiting (llama.cpp's
	// default, poll 50). Busy-waiting is what makes several threads collapse
	// on a machine shared with other work; sleeping costs a little latency
	// at each barrier. Results are the same either way.
	SleepIdle bool
	// Pooling, when not 0, makes an embeddings context (llama.cpp's
	// embeddings = true) pooling by llama.cpp's enum llama_pooling_type
	// (1 mean, 2 cls, 3 last), whatever the file declares; see
	// [Context.Embedding]. 0 is the logits context the other methods use.
	Pooling int32
}

func (c ContextConfig) withDefaults() ContextConfig {
	if c.NCtx <= 0 {
		c.NCtx = 512
	}
	if c.NBatch <= 0 || c.NBatch > c.NCtx {
		c.NBatch = c.NCtx
	}
	if c.Threads <= 0 {
		c.Threads = 1
	}
	return c
}

// Context is a pinned llama.cpp context over a [Model]. Each of Logits,
// Greedy and Bench starts from an empty KV cache. A Context is not safe for
// concurrent use. Close releases it.
type Context struct {
	model *Model
	cfg   ContextConfig
	ctx   llama.Context
	mem   llama.Memory
	batch llama.Batch
	pool  unsafe.Pointer // ggml thread pool attached when SleepIdle, else nil
}

// NewContext creates a pinned context; cfg's zero fields take their defaults.
func (m *Model) NewContext(cfg ContextConfig) (*Context, error) {
	cfg = cfg.withDefaults()
	p := llama.ContextDefaultParams()
	p.NCtx = uint32(cfg.NCtx)
	p.NBatch = uint32(cfg.NBatch)
	p.NUbatch = uint32(cfg.NBatch)
	p.NSeqMax = 1
	p.NThreads = int32(cfg.Threads)
	p.NThreadsBatch = int32(cfg.Threads)
	p.FlashAttentionType = llama.FlashAttentionTypeDisabled
	p.TypeK = llama.GGMLTypeF16
	p.TypeV = llama.GGMLTypeF16
	p.Embeddings = 0
	if cfg.Pooling != 0 {
		p.Embeddings = 1
		p.PoolingType = llama.PoolingType(cfg.Pooling)
	}
	p.Offload_kqv = 0
	p.OpOffload = 0
	p.NoPerf = 1
	ctx, err := llama.InitFromModel(m.model, p)
	if err != nil || ctx == 0 {
		return nil, fmt.Errorf("%w: new context (n_ctx %d) for %s: %v", ErrContext, cfg.NCtx, m.path, err)
	}
	mem, err := llama.GetMemory(ctx)
	if err != nil {
		llama.Free(ctx)
		return nil, fmt.Errorf("%w: %v", ErrContext, err)
	}
	c := &Context{model: m, cfg: cfg, ctx: ctx, mem: mem}
	if cfg.SleepIdle {
		if err := c.attachSleepingPool(); err != nil {
			llama.Free(ctx)
			return nil, err
		}
	}
	c.batch = llama.BatchInit(int32(cfg.NBatch), 0, 1)
	return c, nil
}

// attachSleepingPool gives the context a thread pool of cfg.Threads threads
// with poll level 0.
func (c *Context) attachSleepingPool() error {
	cpu := c.model.lib.cpu
	if cpu == nil {
		return fmt.Errorf("%w: SleepIdle: %v", ErrContext, ErrNoCPUBackend)
	}
	params := llama.ThreadpoolParamsDefault(int32(c.cfg.Threads))
	params.Poll = 0
	pp := unsafe.Pointer(&params)
	var pool unsafe.Pointer
	cpu.threadpoolNew.Call(&pool, &pp)
	runtime.KeepAlive(&params)
	if pool == nil {
		return fmt.Errorf("%w: ggml_threadpool_new(%d threads) failed", ErrContext, c.cfg.Threads)
	}
	c.pool = pool
	llama.AttachThreadpool(c.ctx, uintptr(pool), uintptr(pool))
	return nil
}

// Config is the context's configuration with defaults filled in.
func (c *Context) Config() ContextConfig { return c.cfg }

// Close frees the context. It must not be used afterwards.
func (c *Context) Close() error {
	if c.ctx == 0 {
		return nil
	}
	llama.BatchFree(c.batch)
	if c.pool != nil {
		llama.DetachThreadpool(c.ctx)
	}
	err := llama.Free(c.ctx)
	if c.pool != nil {
		c.model.lib.cpu.threadpoolFree.Call(nil, &c.pool)
		c.pool = nil
	}
	c.ctx = 0
	return err
}

// reset empties the KV cache.
func (c *Context) reset() error {
	return llama.MemoryClear(c.mem, true)
}

// decode runs tokens at positions start.. through the model in batches of
// at most NBatch. When all is true every position produces logits, handed to
// each(position, logits) — logits is only valid during the call; otherwise
// only the last position does.
func (c *Context) decode(tokens []llama.Token, start int, all bool, each func(pos int, logits []float32)) error {
	if start+len(tokens) > c.cfg.NCtx {
		return fmt.Errorf("%w: %d positions, n_ctx %d", ErrTooLong, start+len(tokens), c.cfg.NCtx)
	}
	for lo := 0; lo < len(tokens); lo += c.cfg.NBatch {
		hi := min(lo+c.cfg.NBatch, len(tokens))
		c.batch.Clear()
		for i := lo; i < hi; i++ {
			out := all || i == len(tokens)-1
			if err := c.batch.Add(tokens[i], llama.Pos(start+i), []llama.SeqId{0}, out); err != nil {
				return fmt.Errorf("%w: batch: %v", ErrContext, err)
			}
		}
		rc, err := llama.Decode(c.ctx, c.batch)
		if err != nil || rc != 0 {
			return fmt.Errorf("%w: llama_decode of positions %d..%d: status %d %v", ErrContext, start+lo, start+hi-1, rc, err)
		}
		if each == nil {
			continue
		}
		for i := lo; i < hi; i++ {
			if !all && i != len(tokens)-1 {
				continue
			}
			logits, err := llama.GetLogitsIth(c.ctx, int32(i-lo), c.model.nVocab)
			if err != nil || logits == nil {
				return fmt.Errorf("%w: no logits at position %d", ErrContext, start+i)
			}
			each(start+i, logits)
		}
	}
	return nil
}

// Logits runs tokens teacher-forced from an empty cache and returns the
// logits after every position: out[i] is [n_vocab]float32, the prediction
// for position i+1 given tokens[:i+1]. len(tokens) must not exceed NCtx
// ([ErrTooLong]); ids out of range give [ErrBadToken].
func (c *Context) Logits(tokens []int32) ([][]float32, error) {
	toks, err := c.model.tokens(tokens)
	if err != nil {
		return nil, err
	}
	if err := c.reset(); err != nil {
		return nil, err
	}
	out := make([][]float32, len(tokens))
	err = c.decode(toks, 0, true, func(pos int, logits []float32) {
		out[pos] = append([]float32(nil), logits...)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// PromptLogits runs tokens from an empty cache in batches of NBatch, as
// Greedy prefills its prompt, and returns the logits after the last one
// ([n_vocab]float32, a copy): only that position outputs logits, so
// llama.cpp's graph drops the other rows before the last layer's
// feed-forward (inp_out_ids). Errors as Logits.
func (c *Context) PromptLogits(tokens []int32) ([]float32, error) {
	toks, err := c.model.tokens(tokens)
	if err != nil {
		return nil, err
	}
	if len(toks) == 0 {
		return nil, fmt.Errorf("%w: empty prompt", ErrContext)
	}
	if err := c.reset(); err != nil {
		return nil, err
	}
	var out []float32
	err = c.decode(toks, 0, false, func(_ int, logits []float32) {
		out = append([]float32(nil), logits...)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Greedy decodes n tokens after prompt from an empty cache, each the argmax
// of the logits (the lowest id among equal maxima, as llama.cpp's greedy
// sampler picks). The prompt is prefilled in batches of NBatch, then each
// new token is decoded alone. Unless ignoreEOG, generation stops at the
// first end-of-generation token ([Model.IsEOG]), which is not returned.
// len(prompt)+n-1 must not exceed NCtx ([ErrTooLong]).
func (c *Context) Greedy(prompt []int32, n int, ignoreEOG bool) ([]int32, error) {
	toks, err := c.model.tokens(prompt)
	if err != nil {
		return nil, err
	}
	if len(toks) == 0 {
		return nil, fmt.Errorf("%w: empty prompt", ErrContext)
	}
	if len(toks)+n-1 > c.cfg.NCtx {
		return nil, fmt.Errorf("%w: %d prompt + %d new tokens, n_ctx %d", ErrTooLong, len(toks), n, c.cfg.NCtx)
	}
	if err := c.reset(); err != nil {
		return nil, err
	}
	var next llama.Token
	pick := func(_ int, logits []float32) { next = llama.Token(argmax(logits)) }
	if err := c.decode(toks, 0, false, pick); err != nil {
		return nil, err
	}
	out := make([]int32, 0, n)
	for pos := len(toks); len(out) < n; pos++ {
		if !ignoreEOG && c.model.IsEOG(int32(next)) {
			break
		}
		out = append(out, int32(next))
		if len(out) == n {
			break
		}
		if err := c.decode([]llama.Token{next}, pos, false, pick); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// argmax is the index of the first largest value.
func argmax(x []float32) int {
	best := 0
	for i, v := range x {
		if v > x[best] {
			best = i
		}
	}
	return best
}
