package grammar_test

import (
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/internal/grammar"
	"github.com/realizar-host/realizar-host/internal/testenv"
	"github.com/realizar-host/realizar-host/tokenizer"
)

var (
	bpeOnce  sync.Once
	bpeTok   *tokenizer.Tokenizer
	bpeVocab *grammar.Vocab
)

// llamaBPE is llama.cpp's Llama 3 vocabulary (128k tokens) from
// testenv.VocabDir (skipped without it, a failure under CI).
func llamaBPE(t testing.TB) (*tokenizer.Tokenizer, *grammar.Vocab) {
	t.Helper()
	path := testenv.VocabFile(t, "ggml-vocab-llama-bpe.gguf")
	bpeOnce.Do(func() {
		tok, err := tokenizer.Open(path)
		if err != nil {
			return
		}
		bpeTok = tok
		bpeVocab = grammar.VocabFromTokenizer(tok)
	})
	require.NotNil(t, bpeVocab)
	return bpeTok, bpeVocab
}

// TestMaskTimeLlamaBPE walks a JSON document's tokens through the JSON
// grammar with cold caches and reports the per-token mask time.
func TestMaskTimeLlamaBPE(t *testing.T) {
	tok, v := llamaBPE(t)
	src, err := os.ReadFile("testdata/json.gbnf")
	require.NoError(t, err)
	g, err := grammar.Compile(string(src))
	require.NoError(t, err)
	doc := `{"name": "Ada Lovelace", "born": 1815, "tags": ["math", "poetry", "engines"], "notes": "Wrote the first published algorithm for Babbage's Analytical Engine — in 1843.", "ok": true}`
	ids := tok.Encode(doc, tokenizer.EncodeOptions{})
	m := grammar.NewMatcher(g, v)
	var times []time.Duration
	for _, id := range ids {
		t0 := time.Now()
		v0 := m.Visits()
		mk := m.Mask()
		times = append(times, time.Since(t0))
		if el := time.Since(t0); el > 100*time.Microsecond {
			t.Logf("before %q: %v, %d nodes, %d loops", v.Piece(id), el, m.Visits()-v0, v.Loops())
		}
		require.NotZero(t, mk[id/32]&(1<<(id%32)), "token %d %q not allowed", id, v.Piece(id))
		require.NoError(t, m.Accept(id))
	}
	t.Logf("times: %v", times)
	slices.Sort(times)
	keys := v.LoopTables()
	for _, k := range keys {
		t.Logf("table %d locals", len(k)/256)
		for j := 0; j < len(k); j++ {
			if k[j] != keys[0][j%len(keys[0])] {
				t.Logf("differs at local %d byte %#x: %d vs %d", j/256, j%256, int8(k[j]), int8(keys[0][j%len(keys[0])]))
				break
			}
		}
	}
	t.Logf("vocab %d tokens, %d trie nodes; %d masks: p50 %v p99 %v max %v", v.Size(), v.TrieNodes(), len(times),
		times[len(times)/2], times[len(times)*99/100], times[len(times)-1])
}

// BenchmarkJSONDocCold: one JSON document's masks and accepts with a
// fresh matcher (cold caches) per iteration, on the 128k vocabulary.
func BenchmarkJSONDocCold(b *testing.B) {
	tok, v := llamaBPE(b)
	src, err := os.ReadFile("testdata/json.gbnf")
	require.NoError(b, err)
	g, err := grammar.Compile(string(src))
	require.NoError(b, err)
	doc := `{"name": "Ada Lovelace", "born": 1815, "tags": ["math", "poetry", "engines"], "notes": "Wrote the first published algorithm for Babbage's Analytical Engine — in 1843.", "ok": true}`
	ids := tok.Encode(doc, tokenizer.EncodeOptions{})
	b.ResetTimer()
	for b.Loop() {
		m := grammar.NewMatcher(g, v)
		for _, id := range ids {
			m.Mask()
			if err := m.Accept(id); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(ids))/1e3, "µs/token")
}

// BenchmarkFullWalk: the first mask of a counted repetition, a state with
// no loop, which walks the whole trie (128k vocabulary).
func BenchmarkFullWalk(b *testing.B) {
	_, v := llamaBPE(b)
	g, err := grammar.Compile(`root ::= [^"]{0,1000} "\""`)
	require.NoError(b, err)
	m := grammar.NewMatcher(g, v)
	m.Mask()
	b.ResetTimer()
	for b.Loop() {
		m := grammar.NewMatcher(g, v)
		m.Mask()
	}
	b.ReportMetric(float64(v.TrieNodes()), "nodes")
}
