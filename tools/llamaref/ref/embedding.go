package ref

import (
	"fmt"
	"math"

	"github.com/hybridgroup/yzma/pkg/llama"
)

// Embedding runs tokens from an empty cache in one llama_decode per NBatch
// tokens, every position an output, and returns llama.cpp's pooled
// embedding of the sequence ([n_embd]float32, a copy, not normalized:
// llama_get_embeddings_seq). The context must have been made with a
// Pooling ([ContextConfig.Pooling]); errors otherwise, and as Logits.
func (c *Context) Embedding(tokens []int32) ([]float32, error) {
	if c.cfg.Pooling == 0 {
		return nil, fmt.Errorf("%w: Embedding needs a context made with a Pooling", ErrContext)
	}
	toks, err := c.model.tokens(tokens)
	if err != nil {
		return nil, err
	}
	if len(toks) == 0 {
		return nil, fmt.Errorf("%w: empty input", ErrContext)
	}
	if err := c.reset(); err != nil {
		return nil, err
	}
	if err := c.decode(toks, 0, true, nil); err != nil {
		return nil, err
	}
	n := int(llama.ModelNEmbd(c.model.model))
	e, err := llama.GetEmbeddingsSeq(c.ctx, 0, int32(n))
	if err != nil || e == nil {
		return nil, fmt.Errorf("%w: no pooled embedding (llama_get_embeddings_seq): %v", ErrContext, err)
	}
	return append([]float32(nil), e...), nil
}

// NormalizeEuclidean is llama.cpp's common_embd_normalize(inp, out, n, 2),
// llama-server's default for /v1/embeddings, transcribed: the float32
// squares summed in a double, out = inp * (float)(1/sqrt(sum)), zero when
// the sum is zero. It returns a new slice.
func NormalizeEuclidean(inp []float32) []float32 {
	var sum float64
	for _, x := range inp {
		sum += float64(x * x)
	}
	sum = math.Sqrt(sum)
	var norm float32
	if sum > 0 {
		norm = float32(1.0 / sum)
	}
	out := make([]float32, len(inp))
	for i, x := range inp {
		out[i] = x * norm
	}
	return out
}
