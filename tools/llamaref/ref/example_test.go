package ref_test

import (
	"fmt"
	"log"

	"github.com/realizar-host/realizar-host/tools/llamaref/ref"
)

// Quantize a GGUF with llama.cpp and list the tensor types it wrote.
func ExampleLib_Quantize() {
	l, err := ref.OpenDefault() // $LLAMAREF_DIR or <repo>/.cache/llamaref
	if err != nil {
		log.Fatal(err)
	}
	if err := l.Quantize("model-F32.gguf", "model-Q4_K_M.gguf", "Q4_K_M"); err != nil {
		log.Fatal(err)
	}
	f, err := l.ReadGGUF("model-Q4_K_M.gguf")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(f.Histogram(l)) // map[f32:11 q4_K:...]
}

// Per-position logits and greedy tokens from a pinned context.
func ExampleContext_Logits() {
	l, err := ref.OpenDefault()
	if err != nil {
		log.Fatal(err)
	}
	m, err := l.LoadModel("model.gguf")
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()
	c, err := m.NewContext(ref.ContextConfig{NCtx: 512}) // f16 KV, no flash attention, 1 thread
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ids, _ := m.Tokenize("Once upon a time", true, false)
	logits, err := c.Logits(ids) // logits[i] is [n_vocab]float32 after ids[:i+1]
	if err != nil {
		log.Fatal(err)
	}
	next, _ := c.Greedy(ids, 20, false)
	fmt.Println(len(logits), next)
}
