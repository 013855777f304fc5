// Command packages-go is README's "Using the packages" example: it tells a
// story with the packages alone — the GGUF file, its tokenizer, the CPU
// forward, the decode loop and a sampler plugin (greedy.wasm) in its
// sandbox. It imports only the module's public packages; a test builds it in
// a module of its own and runs it on stories260K.
package main

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/realizar-host/realizar-host/engine"
	"github.com/realizar-host/realizar-host/forward"
	"github.com/realizar-host/realizar-host/gguf"
	"github.com/realizar-host/realizar-host/host"
	"github.com/realizar-host/realizar-host/model"
	"github.com/realizar-host/realizar-host/tokenizer"
)

func main() {
	if len(os.Args) != 4 {
		log.Fatal("usage: packages-go MODEL.gguf SAMPLER.wasm PROMPT")
	}
	ctx := context.Background()

	// The model: its weights mapped from the file, and a forward with a KV cache of its own.
	f, err := gguf.Open(os.Args[1])
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	m, err := model.Load(f, model.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()
	cfg := m.Config()
	fwd, err := forward.NewSequenceForward(m.NewSequence(), forward.Options{Arch: cfg.Arch, ModelContext: cfg.ContextLength})
	if err != nil {
		log.Fatal(err)
	}
	tok, err := tokenizer.Open(os.Args[1])
	if err != nil {
		log.Fatal(err)
	}

	// The sampler: a WebAssembly plugin (here greedy.wasm, one of the clone's reference plugins).
	h, err := host.New(ctx, host.NewConfig())
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close(ctx)
	greedy, err := h.LoadFile(ctx, os.Args[2], host.LoadOptions{})
	if err != nil {
		log.Fatal(err)
	}
	sampler, err := host.NewSampler(tok, greedy)
	if err != nil {
		log.Fatal(err)
	}
	defer sampler.Close()

	// The decode loop: one turn, its text streamed as it is released.
	sess, err := engine.NewSession(fwd, tok, engine.WithSampler(sampler))
	if err != nil {
		log.Fatal(err)
	}
	prompt := tok.Encode(os.Args[3], tokenizer.EncodeOptions{AddSpecial: true})
	turn, err := sess.Generate(prompt, engine.GenerateConfig{
		MaxTokens: 40,
		Cancel:    engine.FromContext(ctx),
		OnToken: func(id int32, text []byte) error {
			_, err := os.Stdout.Write(text)
			return err
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("\n(%d tokens, stop %s)\n", turn.Generated, turn.Stop)
}
