package plugins_test

import (
	"context"
	"fmt"

	"github.com/realizar-host/realizar-host/engine"
	"github.com/realizar-host/realizar-host/engine/enginetest"
	"github.com/realizar-host/realizar-host/forward"
	"github.com/realizar-host/realizar-host/host"
	"github.com/realizar-host/realizar-host/internal/plugins"
)

// Example generates with the embedded default sampler and stop policy:
// no plugin files, no wasm toolchain.
func Example() {
	ctx := context.Background()
	h, err := host.New(ctx, host.NewConfig())
	if err != nil {
		panic(err)
	}
	defer h.Close(ctx)

	// A scripted "model" that says each piece in turn.
	vocab := enginetest.NewVocab([]string{"", "Hello", " wor", "ld", " STOP", "!", "</s>"}, 6)
	fwd, err := forward.NewSequenceForward(enginetest.NewCountingSequence(vocab.Size()), forward.Options{ModelContext: 16})
	if err != nil {
		panic(err)
	}

	load := func(name, config string) *host.Plugin {
		wasm, err := plugins.Builtin(name)
		if err != nil {
			panic(err)
		}
		p, err := h.Load(ctx, wasm, host.LoadOptions{Config: []byte(config)})
		if err != nil {
			panic(err)
		}
		return p
	}
	sampler, err := host.NewSampler(vocab, load("standard", `{"temperature":0}`))
	if err != nil {
		panic(err)
	}
	stop, err := host.NewStopPolicy(vocab, load("strings", `{"stop":[" STOP"]}`))
	if err != nil {
		panic(err)
	}
	sess, err := engine.NewSession(fwd, vocab, engine.WithSampler(sampler), engine.WithStopPolicy(stop))
	if err != nil {
		panic(err)
	}
	defer sess.Close() // closes the plugin instances

	turn, err := sess.Generate([]int32{0}, engine.GenerateConfig{MaxTokens: 10})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%q %s\n", turn.Text, turn.Stop)
	fmt.Println(plugins.Names())
	// Output:
	// "Hello world" stop-policy
	// [greedy standard strings mirostat-v2 dry repetition max-time json grammar lookup]
}
