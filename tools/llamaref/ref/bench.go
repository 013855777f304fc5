package ref

import (
	"fmt"
	"time"

	"github.com/hybridgroup/yzma/pkg/llama"
)

// Timing is one measurement of [Context.Bench].
type Timing struct {
	Threads       int
	PrefillTokens int           // P: tokens of the prompt pass
	PrefillTime   time.Duration // wall time of the prompt pass
	DecodeTokens  int           // G: tokens decoded one at a time
	DecodeTime    time.Duration // wall time of the G single-token decodes
}

// PrefillTokPerSec is the prompt-processing rate, tokens per second.
func (t Timing) PrefillTokPerSec() float64 { return rate(t.PrefillTokens, t.PrefillTime) }

// DecodeTokPerSec is the generation rate, tokens per second.
func (t Timing) DecodeTokPerSec() float64 { return rate(t.DecodeTokens, t.DecodeTime) }

func rate(n int, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// Bench times llama.cpp on this context the way llama-bench does: prefill
// of prefill tokens in batches of NBatch from an empty cache (only the last
// position's logits requested), then, again from an empty cache, decode
// tokens one llama_decode each. The token ids are a fixed pseudo-random
// sequence over the vocabulary. One untimed single-token decode warms the
// context up first. prefill and decode must each fit in NCtx ([ErrTooLong]).
func (c *Context) Bench(prefill, decode int) (Timing, error) {
	t := Timing{Threads: c.cfg.Threads, PrefillTokens: prefill, DecodeTokens: decode}
	if prefill < 0 || decode < 0 || prefill > c.cfg.NCtx || decode > c.cfg.NCtx {
		return t, fmt.Errorf("%w: prefill %d, decode %d, n_ctx %d", ErrTooLong, prefill, decode, c.cfg.NCtx)
	}
	toks := benchTokens(max(prefill, decode, 1), c.model.nVocab)

	if err := c.reset(); err != nil {
		return t, err
	}
	if err := c.decode(toks[:1], 0, false, nil); err != nil {
		return t, err
	}
	llama.Synchronize(c.ctx)

	if prefill > 0 {
		if err := c.reset(); err != nil {
			return t, err
		}
		start := time.Now()
		if err := c.decode(toks[:prefill], 0, false, nil); err != nil {
			return t, err
		}
		llama.Synchronize(c.ctx)
		t.PrefillTime = time.Since(start)
	}

	if decode > 0 {
		if err := c.reset(); err != nil {
			return t, err
		}
		start := time.Now()
		for i := 0; i < decode; i++ {
			if err := c.decode(toks[i:i+1], i, false, nil); err != nil {
				return t, err
			}
		}
		llama.Synchronize(c.ctx)
		t.DecodeTime = time.Since(start)
	}
	return t, nil
}

// benchTokens is a fixed pseudo-random sequence of n ids in [0, nVocab).
func benchTokens(n, nVocab int) []llama.Token {
	out := make([]llama.Token, n)
	x := uint32(0x9e3779b9)
	for i := range out {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		out[i] = llama.Token(x % uint32(nVocab))
	}
	return out
}
