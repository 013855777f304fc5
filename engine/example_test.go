package engine_test

import (
	"context"
	"fmt"

	"github.com/realizar-host/realizar-host/engine"
	"github.com/realizar-host/realizar-host/engine/enginetest"
	"github.com/realizar-host/realizar-host/forward"
)

// A Session over a counting "model" (after token t it predicts t+1), with a
// stop string and streamed output. A real model comes from model/ and a real
// vocabulary from tokenizer/; the loop is the same.
func Example() {
	vocab := enginetest.NewCountingVocab(16) // id i is the text "i "
	fwd, err := forward.NewSequenceForward(enginetest.NewCountingSequence(vocab.Size()),
		forward.Options{Arch: "counting", ModelContext: 64})
	if err != nil {
		panic(err)
	}
	s, err := engine.NewSession(fwd, vocab, engine.WithSampler(enginetest.Greedy{}))
	if err != nil {
		panic(err)
	}

	seed := uint64(7)
	turn, err := s.Generate([]int32{1, 2}, engine.GenerateConfig{
		MaxTokens: 10,
		Seed:      &seed,
		Stop:      enginetest.NewStringsStop("6 "),
		Cancel:    engine.FromContext(context.Background()),
		OnToken: func(id int32, text []byte) error {
			fmt.Printf("token %d streams %q\n", id, text)
			return nil
		},
	})
	if err != nil {
		panic(err)
	}
	fmt.Printf("text %q, stop %s, %d generated, seed %d\n", turn.Text, turn.Stop, turn.Generated, turn.Seed)
	fmt.Println(fwd.Notices()[0])
	// Output:
	// token 3 streams "3 "
	// token 4 streams "4 "
	// token 5 streams "5 "
	// token 6 streams ""
	// text "3 4 5 ", stop stop-policy, 4 generated, seed 7
	// Backend: counting
}

// Perplexity-style scoring: the log-probability of each next token.
func ExampleSession_Score() {
	vocab := enginetest.NewCountingVocab(4)
	fwd, _ := forward.NewSequenceForward(enginetest.NewCountingSequence(vocab.Size()), forward.Options{ModelContext: 8})
	s, _ := engine.NewSession(fwd, vocab)
	tokens := []int32{0, 1, 3}
	_ = s.Score(tokens, func(i int, logits []float32) error {
		if i+1 < len(tokens) {
			fmt.Printf("log p(%d | ...%d) = %.3f\n", tokens[i+1], tokens[i], engine.LogSoftmaxAt(logits, tokens[i+1]))
		}
		return nil
	})
	// Output:
	// log p(1 | ...0) = -0.744
	// log p(3 | ...1) = -1.744
}
