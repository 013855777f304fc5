package plugins_test

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/host"
	"github.com/realizar-host/realizar-host/internal/plugins"
	"github.com/realizar-host/realizar-host/internal/testenv"
	"github.com/realizar-host/realizar-host/tokenizer"
)

// TestGrammarStepCost152k measures the grammar processor inside the
// sandbox on qwen2's 151,936-token vocabulary: init (reading the
// vocabulary, building the trie), and per step of a JSON Schema document
// the mean and worst Sample time with the processor and without.
// GRAMMAR_COST=1 runs it.
func TestGrammarStepCost152k(t *testing.T) {
	if os.Getenv("GRAMMAR_COST") == "" {
		t.Skip("GRAMMAR_COST unset")
	}
	tok, err := tokenizer.Open(testenv.VocabFile(t, "ggml-vocab-qwen2.gguf"))
	require.NoError(t, err)
	schema := `{"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer","minimum":0},"tags":{"type":"array","items":{"type":"string"}},"ok":{"type":"boolean"}},"required":["name","age","tags","ok"],"additionalProperties":false}`
	doc := `{"name":"Ada Lovelace, Countess of Lovelace","age":36,"tags":["mathematics","poetry","analytical engine"],"ok":true}`
	ids := tok.Encode(doc, tokenizer.EncodeOptions{})
	h := newHost(t, host.NewConfig())
	cfg := plugins.Grammar{JSONSchema: json.RawMessage(schema)}.Config()
	p, err := h.Load(context.Background(), wasm(t, "grammar"), host.LoadOptions{Config: cfg,
		Limits: host.Limits{MemoryPages: plugins.GrammarMemoryPages}})
	require.NoError(t, err)
	run := func(withGrammar bool) (mean, worst time.Duration) {
		var s *host.Sampler
		t0 := time.Now()
		if withGrammar {
			s, err = host.NewSampler(tok, load(t, h, "greedy", ""), p)
		} else {
			s, err = host.NewSampler(tok, load(t, h, "greedy", ""))
		}
		require.NoError(t, err)
		defer s.Close()
		require.NoError(t, s.Reset(1, nil))
		if withGrammar {
			t.Logf("init (vocabulary read, trie built, grammar compiled): %v", time.Since(t0))
		}
		logits := make([]float32, tok.Size())
		var total time.Duration
		for _, id := range ids {
			clear(logits)
			logits[id] = 10
			t1 := time.Now()
			got, err := s.Sample(logits)
			d := time.Since(t1)
			require.NoError(t, err)
			require.Equal(t, id, got)
			s.Accept(got)
			total += d
			worst = max(worst, d)
		}
		return total / time.Duration(len(ids)), worst
	}
	bm, bw := run(false)
	gm, gw := run(true)
	gm2, gw2 := run(true) // a second turn: the plugin's state masks are cached
	t.Logf("%d steps at %d tokens: greedy alone mean %v worst %v; with grammar mean %v worst %v; second turn mean %v worst %v",
		len(ids), tok.Size(), bm, bw, gm, gw, gm2, gw2)
}
