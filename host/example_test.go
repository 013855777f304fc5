package host_test

import (
	"context"
	"fmt"
	"os"

	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/engine/enginetest"
	"github.com/realizar-host/realizar-host/host"
)

// A Session's sampler: load once per process, adapt once per Session.
func Example() {
	ctx := context.Background()
	h, err := host.New(ctx, host.NewConfig())
	if err != nil {
		panic(err)
	}
	defer h.Close(ctx)

	wasm, err := os.ReadFile("testdata/greedy.wasm")
	if err != nil {
		panic(err)
	}
	p, err := h.Load(ctx, wasm, host.LoadOptions{Kind: abi.KindSampler})
	if err != nil {
		panic(err)
	}
	defer p.Close() // its adapters hold its code on their own
	vocab := enginetest.NewTokenVocab(4, nil)
	s, err := host.NewSampler(vocab, p)
	if err != nil {
		panic(err)
	}
	defer s.Close()

	if err := s.Reset(42, []int32{1, 2}); err != nil {
		panic(err)
	}
	id, err := s.Sample([]float32{0.1, 2.5, -1, 2.5})
	if err != nil {
		panic(err)
	}
	s.Accept(id)
	fmt.Println(p.Meta().Name, id)
	// Output: greedy 1
}
