package model_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/realizar-host/realizar-host/gguf"
	"github.com/realizar-host/realizar-host/internal/fixture"
	"github.com/realizar-host/realizar-host/model"
)

func Example() {
	dir, err := os.MkdirTemp("", "model-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	// A small random-weight llama with the project's fixture generator.
	cfg := fixture.Tiny()
	cfg.Embd, cfg.FF, cfg.Heads, cfg.HeadsKV = 64, 128, 4, 2
	vocab, err := fixture.LlamaVocab()
	if err != nil {
		log.Fatal(err)
	}
	defer vocab.Close()
	path := filepath.Join(dir, "tiny.gguf")
	if err := fixture.GenerateFile(path, cfg, vocab); err != nil {
		log.Fatal(err)
	}

	f, err := gguf.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	m, err := model.Load(f, model.Options{Threads: 2})
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close() // before f.Close: the weights are views of the file

	c := m.Config()
	fmt.Printf("%s: %d layers, %d heads (%d KV) of %d, RoPE %s, vocab %d\n",
		c.Arch, c.Layers, c.Heads, c.KVHeads, c.HeadDim, c.RopeType, c.Vocab)

	s := m.NewSequence()
	prompt := []int32{1, 450, 4996, 17354}
	logits, err := s.Prefill(prompt, 0) // positions 0..3 in one batched pass
	if err != nil {
		log.Fatal(err)
	}
	next := 0
	for i, v := range logits {
		if v > logits[next] {
			next = i
		}
	}
	logits, err = s.Step(int32(next), len(prompt)) // then one token at a time
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(logits), "logits")
	// Output:
	// llama: 2 layers, 4 heads (2 KV) of 16, RoPE norm, vocab 32000
	// 32000 logits
}
