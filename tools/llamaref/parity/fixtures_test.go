package parity

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/gguf"
)

// fixtureModels are the generated F32 models the file tests quantize.
//
// Until the project's fixture generator lands, this is one stand-in written
// here: a 2-layer llama of width 256 (so llama.cpp quantizes it to Q4_K,
// Q5_K and Q6_K) with random N(0, 0.02) weights and no tokenizer. It is only
// ever quantized and read, never run.
func fixtureModels(t *testing.T) []string {
	t.Helper()
	fixtureOnce.Do(func() {
		dir, err := os.MkdirTemp("", "llamaref-fixture-")
		if err != nil {
			fixtureErr = err
			return
		}
		fixtureDir = dir
		fixturePath = filepath.Join(dir, "tiny-llama-256-F32.gguf")
		fixtureErr = writeTinyLlama(fixturePath)
	})
	require.NoError(t, fixtureErr)
	return []string{fixturePath}
}

var (
	fixtureOnce sync.Once
	fixtureDir  string
	fixturePath string
	fixtureErr  error
)

func writeTinyLlama(path string) error {
	const (
		dim, ffn, layers, heads, kvHeads, vocab = 256, 512, 2, 4, 2, 256
		kvDim                                   = dim / heads * kvHeads
	)
	kv := []gguf.KV{
		{Key: "general.architecture", Value: "llama"},
		{Key: "general.name", Value: "tiny-llama-256"},
		{Key: "llama.context_length", Value: uint32(256)},
		{Key: "llama.embedding_length", Value: uint32(dim)},
		{Key: "llama.feed_forward_length", Value: uint32(ffn)},
		{Key: "llama.block_count", Value: uint32(layers)},
		{Key: "llama.attention.head_count", Value: uint32(heads)},
		{Key: "llama.attention.head_count_kv", Value: uint32(kvHeads)},
		{Key: "llama.attention.layer_norm_rms_epsilon", Value: float32(1e-5)},
		{Key: "llama.rope.dimension_count", Value: uint32(dim / heads)},
		{Key: "llama.vocab_size", Value: uint32(vocab)},
		{Key: "general.file_type", Value: uint32(0)},
	}
	r := rand.New(rand.NewPCG(42, 42))
	tensor := func(name string, dims ...int64) gguf.Tensor {
		n := int64(1)
		for _, d := range dims {
			n *= d
		}
		data := make([]byte, 4*n)
		for i := int64(0); i < n; i++ {
			v := float32(0.02 * r.NormFloat64())
			if len(dims) == 1 {
				v = 1 // norm weights
			}
			binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(v))
		}
		return gguf.Tensor{Name: name, Type: gguf.TensorType(0), Dims: dims, Data: data}
	}
	tensors := []gguf.Tensor{
		tensor("token_embd.weight", dim, vocab),
		tensor("output_norm.weight", dim),
		tensor("output.weight", dim, vocab),
	}
	for i := 0; i < layers; i++ {
		p := fmt.Sprintf("blk.%d.", i)
		tensors = append(tensors,
			tensor(p+"attn_norm.weight", dim),
			tensor(p+"attn_q.weight", dim, dim),
			tensor(p+"attn_k.weight", dim, kvDim),
			tensor(p+"attn_v.weight", dim, kvDim),
			tensor(p+"attn_output.weight", dim, dim),
			tensor(p+"ffn_norm.weight", dim),
			tensor(p+"ffn_gate.weight", dim, ffn),
			tensor(p+"ffn_up.weight", dim, ffn),
			tensor(p+"ffn_down.weight", ffn, dim),
		)
	}
	return gguf.WriteFile(path, kv, tensors)
}
