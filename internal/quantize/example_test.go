package quantize_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/realizar-host/realizar-host/gguf"
	"github.com/realizar-host/realizar-host/internal/quantize"
)

// Quantize a one-layer llama to Q4_K_M and list the type of every tensor.
func ExampleFile() {
	dir, _ := os.MkdirTemp("", "quantize-example")
	defer os.RemoveAll(dir)
	src, dst := filepath.Join(dir, "f32.gguf"), filepath.Join(dir, "q4_k_m.gguf")
	mat := func(name string, cols, rows int64) gguf.Tensor {
		return gguf.Tensor{Name: name, Type: gguf.TypeF32, Dims: []int64{cols, rows}, Data: make([]byte, 4*cols*rows)}
	}
	err := gguf.WriteFile(src, []gguf.KV{
		{Key: gguf.KeyArchitecture, Value: "llama"},
		{Key: "llama.block_count", Value: uint32(1)},
	}, []gguf.Tensor{
		mat("token_embd.weight", 256, 16),
		{Name: "blk.0.attn_norm.weight", Type: gguf.TypeF32, Dims: []int64{256}, Data: make([]byte, 4*256)},
		mat("blk.0.attn_q.weight", 256, 256),
		mat("blk.0.ffn_down.weight", 96, 256), // rows of 96: Q6_K falls back to Q8_0
		mat("output.weight", 256, 16),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	rep, err := quantize.File(dst, src, quantize.Options{FileType: quantize.Q4_KM})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, t := range rep.Tensors {
		fmt.Printf("%-24s %-4v -> %v\n", t.Name, t.From, t.To)
	}
	// Output:
	// output.weight            F32  -> Q6_K
	// token_embd.weight        F32  -> Q4_K
	// blk.0.attn_norm.weight   F32  -> F32
	// blk.0.attn_q.weight      F32  -> Q4_K
	// blk.0.ffn_down.weight    F32  -> Q8_0
}
