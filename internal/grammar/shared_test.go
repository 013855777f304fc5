package grammar_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/internal/grammar"
	"github.com/realizar-host/realizar-host/tokenizer"
)

// firstDiff describes where two masks differ ("" when they are equal).
func firstDiff(v *grammar.Vocab, got, want []uint32) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%d words, want %d", len(got), len(want))
	}
	for w := range got {
		if d := got[w] ^ want[w]; d != 0 {
			for b := range 32 {
				if d>>b&1 != 0 {
					id := int32(w*32 + b)
					return fmt.Sprintf("token %d %q: shared %v, unshared %v", id, v.Piece(id), got[w]>>b&1 != 0, want[w]>>b&1 != 0)
				}
			}
		}
	}
	return ""
}

// TestSharedMaskBench: on real MaskBench instances with the Llama 3
// vocabulary, a fresh matcher per instance (sharing its grammar's masks
// with the instances before it) writes the same mask at every token as a
// matcher that shares nothing. Every 25th file by default (~1 s);
// MASKBENCH_SHARED=all runs all 300.
func TestSharedMaskBench(t *testing.T) {
	tok, v := llamaBPE(t)
	files, err := filepath.Glob(filepath.Join(maskbenchDir(t), "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	step := 25
	if os.Getenv("MASKBENCH_SHARED") == "all" {
		step = 1
	}
	var hits int64
	masks, schemas := 0, 0
	for i := 0; i < len(files); i += step {
		raw, err := os.ReadFile(files[i])
		require.NoError(t, err)
		var mb struct {
			Schema json.RawMessage `json:"schema"`
			Tests  []struct {
				Data json.RawMessage `json:"data"`
			} `json:"tests"`
		}
		require.NoError(t, json.Unmarshal(raw, &mb))
		src, err := grammar.FromJSONSchema(mb.Schema)
		if err != nil {
			continue // refused: nothing to mask
		}
		g, err := grammar.Compile(src)
		require.NoError(t, err)
		schemas++
		ref := grammar.NewUnsharedMatcher(g, v)
		for j, tc := range mb.Tests {
			inst, err := grammar.SerializeInstance(mb.Schema, tc.Data)
			require.NoError(t, err)
			m := grammar.NewMatcher(g, v)
			ref.Reset()
			for _, id := range tok.Encode(inst, tokenizer.EncodeOptions{}) {
				got, want := m.Mask(), ref.Mask()
				masks++
				if d := firstDiff(v, got, want); d != "" {
					t.Fatalf("%s #%d at token %d: %s", filepath.Base(files[i]), j, id, d)
				}
				if want[id/32]>>(id%32)&1 == 0 {
					break // an invalid instance: its masks so far agreed
				}
				require.NoError(t, m.Accept(id))
				require.NoError(t, ref.Accept(id))
			}
		}
		hits += g.SharedStats(v).Hits
	}
	t.Logf("%d schemas, %d masks compared, %d from the shared cache", schemas, masks, hits)
	require.Positive(t, schemas)
	assert.Positive(t, hits, "no mask came from the shared cache: the test compared nothing shared")
}

// sharedCases are grammars with documents that reach counters, free keys,
// strings cut across UTF-8 characters and the end of the grammar.
func sharedCases(t *testing.T) []struct {
	gbnf string
	docs []string
} {
	jsonGBNF, err := os.ReadFile("testdata/json.gbnf")
	require.NoError(t, err)
	schema, err := grammar.FromJSONSchema([]byte(`{"type":"object","properties":{"name":{"type":"string","maxLength":10},"id":{"type":"string","maxLength":40}},"additionalProperties":{"type":"string","maxLength":5}}`))
	require.NoError(t, err)
	return []struct {
		gbnf string
		docs []string
	}{
		{schema, []string{`{"name":"abcdefghij","id":"x","nab":"12345"}`, `{"id":"éé€😀\u00e9\n","na":"","é":"a"}`, `{"name":"abcdefghijk"}`}},
		{string(jsonGBNF), []string{`{"a": [1, 2.5e3, "x\u00e9"], "b": {"c": null}}`, `["abc", true, false, {"k": "€😀"}]`}},
		{`root ::= "[" [a-z]{2,10} ( "," [a-z]{0,5} ){0,7} "]"`, []string{`[ab,,abcde,x]`, `[abcdefghij,a,b,c,d,e,f,g]`}},
	}
}

// refMasks is, per document, the mask after each byte prefix (up to the
// first byte refused) from a matcher that shares nothing.
func refMasks(t *testing.T, g *grammar.Grammar, v *grammar.Vocab, docs []string) [][][]uint32 {
	out := make([][][]uint32, len(docs))
	for i, doc := range docs {
		m := grammar.NewUnsharedMatcher(g, v)
		for k := 0; k <= len(doc); k++ {
			out[i] = append(out[i], slices.Clone(m.Mask()))
			if k == len(doc) || m.AcceptBytes([]byte{doc[k]}) != nil {
				break
			}
		}
	}
	return out
}

// TestSharedMasksConcurrent: matchers of one grammar on 4 goroutines,
// each fresh per document, write the unshared matcher's masks, with the
// default cap and with a cap of a few masks (past which the cache stops
// taking masks). CI runs it under -race (Makefile, test-race).
func TestSharedMasksConcurrent(t *testing.T) {
	v, _ := randomVocab(t, 11, 600)
	maskBytes := 4 * ((v.Size() + 31) / 32)
	for _, capBytes := range []int{grammar.MaxSharedMaskBytes, 6 * maskBytes} {
		t.Run(fmt.Sprint("cap ", capBytes), func(t *testing.T) {
			defer grammar.SetSharedCap(capBytes)()
			for ci, c := range sharedCases(t) {
				g, err := grammar.Compile(c.gbnf)
				require.NoError(t, err)
				want := refMasks(t, g, v, c.docs)
				rounds := 2 * len(c.docs)
				if capBytes < grammar.MaxSharedMaskBytes {
					rounds = len(c.docs) // most masks are computed: slower
				}
				var wg sync.WaitGroup
				for w := range 4 {
					wg.Go(func() {
						for r := range rounds {
							i := (w + r) % len(c.docs)
							doc := c.docs[i]
							m := grammar.NewMatcher(g, v)
							for k, mk := range want[i] {
								if d := firstDiff(v, m.Mask(), mk); d != "" {
									t.Errorf("case %d doc %d after %q: %s", ci, i, doc[:k], d)
									return
								}
								if k < len(doc) && m.AcceptBytes([]byte{doc[k]}) != nil {
									break
								}
							}
						}
					})
				}
				wg.Wait()
				st := g.SharedStats(v)
				assert.Positive(t, st.Hits, "case %d", ci)
				assert.LessOrEqual(t, st.Bytes, capBytes, "case %d", ci)
				if capBytes < grammar.MaxSharedMaskBytes {
					assert.Positive(t, st.Refused, "case %d: the small cap never stopped the cache", ci)
				} else {
					assert.Zero(t, st.Refused, "case %d", ci)
				}
			}
		})
	}
}
