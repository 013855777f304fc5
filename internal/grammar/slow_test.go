package grammar_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/realizar-host/realizar-host/internal/grammar"
	"github.com/realizar-host/realizar-host/tokenizer"
)

// TestSlowMasks logs every mask over 1 ms on the MaskBench files with the
// llama-bpe vocabulary: its time, the trie nodes it stepped and the text
// before it (SLOW_MASKS=1). A tool for finding what makes TBM's p99.
func TestSlowMasks(t *testing.T) {
	if os.Getenv("SLOW_MASKS") == "" {
		t.Skip("SLOW_MASKS unset")
	}
	tok, v := llamaBPE(t)
	files, _ := filepath.Glob(filepath.Join(maskbenchDir(t), "*.json"))
	for _, f := range files {
		raw, _ := os.ReadFile(f)
		var mb struct {
			Schema json.RawMessage `json:"schema"`
			Tests  []struct {
				Data json.RawMessage `json:"data"`
			} `json:"tests"`
		}
		json.Unmarshal(raw, &mb)
		src, err := grammar.FromJSONSchema(mb.Schema)
		if err != nil {
			continue
		}
		g, _ := grammar.Compile(src)
		for _, tc := range mb.Tests {
			inst, _ := grammar.SerializeInstance(mb.Schema, tc.Data)
			ids := tok.Encode(inst, tokenizer.EncodeOptions{})
			m := grammar.NewMatcher(g, v)
			text := ""
			for _, id := range ids {
				v0 := m.Visits()
				t0 := time.Now()
				mk := m.Mask()
				if d := time.Since(t0); d > time.Millisecond {
					t.Logf("%s %v %d nodes loops %d after %q", filepath.Base(f), d, m.Visits()-v0, v.Loops(), tail(text, 60))
				}
				if mk[id/32]&(1<<(id%32)) == 0 || m.Accept(id) != nil {
					break
				}
				text += string(v.Piece(id))
			}
		}
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
