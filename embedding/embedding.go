// Package embedding turns a model's final hidden states into one vector per
// input, as llama.cpp does: pooled over the input's tokens by the model's
// pooling type (the GGUF key {arch}.pooling_type: mean, cls or last) and
// normalized to unit Euclidean length (llama-server's default,
// embd_normalize 2).
package embedding

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/realizar-host/realizar-host/gguf"
	"github.com/realizar-host/realizar-host/model"
)

// Pooling is how a sequence's hidden states become one vector. The values
// are llama.cpp's enum llama_pooling_type, as GGUF files store them.
type Pooling int32

// The pooling types. None (per-token vectors) and Rank (a reranker's
// classification head) are named so that a file's value can be reported;
// an Embedder takes Mean, CLS and Last only.
const (
	PoolingNone Pooling = 0 // one vector per token: not an embedding of the input
	PoolingMean Pooling = 1 // the mean of every token's state
	PoolingCLS  Pooling = 2 // the first token's state
	PoolingLast Pooling = 3 // the last token's state
	PoolingRank Pooling = 4 // a reranker's score: unsupported
)

var poolingNames = [...]string{PoolingNone: "none", PoolingMean: "mean", PoolingCLS: "cls", PoolingLast: "last", PoolingRank: "rank"}

// String is llama.cpp's name for p (its --pooling values), or "pooling(N)".
func (p Pooling) String() string {
	if p >= 0 && int(p) < len(poolingNames) {
		return poolingNames[p]
	}
	return fmt.Sprintf("pooling(%d)", int32(p))
}

// Pools reports whether an Embedder takes p: mean, cls or last.
func (p Pooling) Pools() bool { return p == PoolingMean || p == PoolingCLS || p == PoolingLast }

// ErrPooling reports a pooling type that is unknown or cannot make an
// embedding (none, rank).
var ErrPooling = errors.New("embedding: no usable pooling type")

// ParsePooling reads one of llama.cpp's --pooling names (none, mean, cls,
// last, rank). Errors: ErrPooling for any other text.
func ParsePooling(s string) (Pooling, error) {
	for p, name := range poolingNames {
		if s == name {
			return Pooling(p), nil
		}
	}
	return 0, fmt.Errorf("%w: %q is not one of %s", ErrPooling, s, strings.Join(poolingNames[:], ", "))
}

// PoolingOf is the pooling type f declares under {general.architecture}.pooling_type,
// read as llama.cpp reads it: absent means PoolingNone (a generative model).
// declared is false when the key is absent.
//
// Errors: a gguf error when general.architecture is missing or the key is
// not an integer; ErrPooling for a value outside llama.cpp's enum.
func PoolingOf(f *gguf.File) (p Pooling, declared bool, err error) {
	arch, err := f.String("general.architecture")
	if err != nil {
		return 0, false, err
	}
	key := arch + ".pooling_type"
	v, err := f.Int32(key)
	switch {
	case errors.Is(err, gguf.ErrKeyNotFound):
		return PoolingNone, false, nil
	case err != nil:
		return 0, false, err
	case v < 0 || int(v) >= len(poolingNames):
		return 0, true, fmt.Errorf("%w: %s is %d, not one of llama.cpp's 0..%d", ErrPooling, key, v, len(poolingNames)-1)
	}
	return Pooling(v), true, nil
}

// Pool writes the pooled vector of n tokens' hidden states (hidden is
// [n*dims]float32, row i token i's) into dst ([dims]float32, grown as
// needed) and returns it. Mean sums each dimension over the tokens in
// float64, scaled by 1/n; CLS and Last copy a row.
//
// Errors: ErrPooling for a type that does not pool; an error when hidden
// does not hold n rows of dims (n >= 1).
func Pool(dst, hidden []float32, n, dims int, p Pooling) ([]float32, error) {
	if n < 1 || dims < 1 || len(hidden) != n*dims {
		return nil, fmt.Errorf("embedding: %d hidden values are not %d rows of %d", len(hidden), n, dims)
	}
	if cap(dst) < dims {
		dst = make([]float32, dims)
	}
	dst = dst[:dims]
	switch p {
	case PoolingMean:
		inv := 1 / float64(n)
		for d := range dims {
			var sum float64
			for i := range n {
				sum += float64(hidden[i*dims+d])
			}
			dst[d] = float32(sum * inv)
		}
	case PoolingCLS:
		copy(dst, hidden[:dims])
	case PoolingLast:
		copy(dst, hidden[(n-1)*dims:])
	default:
		return nil, fmt.Errorf("%w: %s does not pool a sequence into one vector", ErrPooling, p)
	}
	return dst, nil
}

// Normalize scales v to unit Euclidean length in place, as llama.cpp's
// common_embd_normalize with embd_norm 2 (llama-server's default): the
// squares (each a float32 product) summed in float64, v times 1/sqrt(sum)
// rounded to float32. A zero vector stays zero.
func Normalize(v []float32) {
	var sum float64
	for _, x := range v {
		sum += float64(x * x)
	}
	var scale float32
	if sum = math.Sqrt(sum); sum > 0 {
		scale = float32(1 / sum)
	}
	for i := range v {
		v[i] *= scale
	}
}

// Embedder computes normalized, pooled embeddings with a model. Safe for
// concurrent use: each call takes a decoding state (a KV cache of its own,
// kept for reuse between calls) from a pool.
type Embedder struct {
	m       *model.Model
	pooling Pooling
	steps   sync.Pool // of *state
}

// state is one call's decoding state and scratch.
type state struct {
	step   *model.Sequence
	hidden []float32
}

// New returns an Embedder over m pooling with p.
// Errors: ErrPooling unless p is mean, cls or last.
func New(m *model.Model, p Pooling) (*Embedder, error) {
	if !p.Pools() {
		return nil, fmt.Errorf("%w: %s (an embedding takes mean, cls or last)", ErrPooling, p)
	}
	e := &Embedder{m: m, pooling: p}
	e.steps.New = func() any { return &state{step: m.NewSequence()} }
	return e, nil
}

// Dims is the length of an embedding: the model's embedding width (n_embd).
func (e *Embedder) Dims() int { return e.m.Config().Embd }

// Pooling is the Embedder's pooling type.
func (e *Embedder) Pooling() Pooling { return e.pooling }

// ContextLength is the most tokens one input may have.
func (e *Embedder) ContextLength() int { return e.m.Config().ContextLength }

// Embed returns the embedding of tokens (one input, BOS included when the
// caller wants it), [Dims]float32 of unit length, newly allocated.
//
// Errors: those of model.Sequence.Hidden — forward.ErrBadToken for an id outside
// the vocabulary, forward.ErrContextExceeded for more than ContextLength
// tokens, model.ErrPosition for none.
func (e *Embedder) Embed(tokens []int32) ([]float32, error) {
	st := e.steps.Get().(*state)
	defer e.steps.Put(st)
	hidden, err := st.step.Hidden(st.hidden, tokens)
	if err != nil {
		return nil, err
	}
	st.hidden = hidden
	out, err := Pool(nil, hidden, len(tokens), e.Dims(), e.pooling)
	if err != nil {
		return nil, err
	}
	Normalize(out)
	return out, nil
}
