package engine_test

import (
	"testing"

	"github.com/realizar-host/realizar-host/engine"
	"github.com/realizar-host/realizar-host/engine/enginetest"
	"github.com/realizar-host/realizar-host/forward"
)

// BenchmarkGenerateLoop measures the Session's own cost per generated token
// (logits copy, greedy sample, stop check, streaming) over a counting step
// with a 32000-id vocabulary, so the forward costs almost nothing.
func BenchmarkGenerateLoop(b *testing.B) {
	const vocab, tokens = 32000, 256
	v := enginetest.NewCountingVocab(vocab)
	fwd, err := forward.NewSequenceForward(enginetest.NewCountingSequence(vocab), forward.Options{ModelContext: 1024})
	if err != nil {
		b.Fatal(err)
	}
	s, err := engine.NewSession(fwd, v, engine.WithSampler(enginetest.Greedy{}))
	if err != nil {
		b.Fatal(err)
	}
	cfg := engine.GenerateConfig{
		MaxTokens: tokens,
		Stop:      enginetest.NewStringsStop("never"),
		OnToken:   func(int32, []byte) error { return nil },
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Generate([]int32{1}, cfg); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*tokens), "ns/token")
}
