package parity

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/embedding"
	"github.com/realizar-host/realizar-host/tools/llamaref/internal/reftest"
	"github.com/realizar-host/realizar-host/tools/llamaref/ref"
)

// minEmbeddingCosine is the least cosine similarity an embedding of ours
// may have with llama.cpp's (issue 35's bound).
const minEmbeddingCosine = 0.9999

// embeddingFiles are the files the embeddings are compared on: the tiny
// (llama) and qwen2-tiny fixtures as generated (F32) and quantized by
// llama.cpp to Q4_K_M and Q8_0.
var embeddingFiles = []struct{ source, ftype string }{
	{"fixture-tiny-F32.gguf", "F32"},
	{"fixture-tiny-F32.gguf", "Q4_K_M"},
	{"fixture-tiny-F32.gguf", "Q8_0"},
	{"fixture-qwen2-tiny-F32.gguf", "F32"},
	{"fixture-qwen2-tiny-F32.gguf", "Q4_K_M"},
	{"fixture-qwen2-tiny-F32.gguf", "Q8_0"},
}

// TestEmbeddings: for each file, each pooling type (mean, cls, last) and
// inputs of 1 to 64 tokens, our normalized embedding (package embedding
// over model.Sequence.Hidden) against llama.cpp's pooled embedding
// (llama_get_embeddings_seq) normalized as llama-server does by default
// (common_embd_normalize with 2): cosine >= 0.9999 for every vector. It
// logs how many are bit-identical, which the test does not require: mean
// pooling sums in float64 where llama.cpp multiplies by a matrix of 1/n,
// and a prompt pass of ours is llama.cpp's bit for bit only where
// TestPrefillLogits says so (on Zen 5: cls and last on Q8_0, 5 of 5).
func TestEmbeddings(t *testing.T) {
	l := reftest.Lib(t)
	var files []target
	for _, f := range embeddingFiles {
		if f.ftype == "F32" {
			for _, src := range sourceModels(t, l) {
				if filepath.Base(src.path) == f.source {
					files = append(files, target{strings.TrimSuffix(f.source, ".gguf"), src.path})
				}
			}
			continue
		}
		for _, q := range quantizedFiles(t, l) {
			if filepath.Base(q.source) == f.source && q.ftype == f.ftype {
				files = append(files, target{strings.TrimSuffix(filepath.Base(q.path), ".gguf"), q.path})
			}
		}
	}
	require.Len(t, files, len(embeddingFiles), "every embedding file is generated")
	lengths := []int{1, 2, 5, 17, 64}
	for _, tg := range files {
		t.Run(tg.name, func(t *testing.T) {
			rm := reftest.Model(t, l, tg.path)
			toks := storyTokens(t, rm)
			m := loadOurs(t, tg.path, 2)
			for _, p := range []embedding.Pooling{embedding.PoolingMean, embedding.PoolingCLS, embedding.PoolingLast} {
				rc := reftest.Context(t, rm, ref.ContextConfig{NCtx: refContext, Pooling: int32(p)})
				e, err := embedding.New(m, p)
				require.NoError(t, err)
				same, worst := 0, 1.0
				for _, n := range lengths {
					raw, err := rc.Embedding(toks[:n])
					require.NoError(t, err)
					want := ref.NormalizeEuclidean(raw)
					got, err := e.Embed(toks[:n])
					require.NoError(t, err)
					require.Len(t, got, len(want))
					cos, _, _ := compare(got, want)
					worst = min(worst, cos)
					assert.GreaterOrEqual(t, cos, minEmbeddingCosine, fmt.Sprintf("%s pooling, %d tokens", p, n))
					if bits, _ := sameBits(got, want); bits {
						same++
					}
				}
				t.Logf("%s pooling: %d of %d inputs bit-identical, worst cosine %.9f", p, same, len(lengths), worst)
			}
		})
	}
}
