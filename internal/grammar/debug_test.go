package grammar_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/realizar-host/realizar-host/internal/grammar"
)

// TestDebugFile walks one MaskBench file's instances byte by byte and logs
// where each stops matching (DEBUG_FILE=name.json; DEBUG_GBNF=1 also logs
// the generated grammar). A tool for finding why an instance is refused,
// run by hand: it logs, it checks nothing (TestMaskBenchBytes is the check
// over the same files), so it skips when DEBUG_FILE is unset.
func TestDebugFile(t *testing.T) {
	name := os.Getenv("DEBUG_FILE")
	if name == "" {
		t.Skip("DEBUG_FILE unset: a diagnostic run by hand, not a check")
	}
	raw, err := os.ReadFile(filepath.Join(maskbenchDir(t), name))
	if err != nil {
		t.Fatal(err)
	}
	var mb struct {
		Schema json.RawMessage `json:"schema"`
		Tests  []struct {
			Valid bool            `json:"valid"`
			Data  json.RawMessage `json:"data"`
		} `json:"tests"`
	}
	if err := json.Unmarshal(raw, &mb); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	src, err := grammar.FromJSONSchema(mb.Schema)
	if err != nil {
		t.Fatal(err)
	}
	g, err := grammar.Compile(src)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := byteVocab(t)
	for i, tc := range mb.Tests {
		inst, err := grammar.SerializeInstance(mb.Schema, tc.Data)
		if err != nil {
			t.Fatalf("#%d: %v", i, err)
		}
		m := grammar.NewMatcher(g, v)
		for j := 0; j < len(inst); j++ {
			if err := m.Accept(int32(inst[j])); err != nil {
				t.Logf("#%d valid=%v fails at %d: %q | %q", i, tc.Valid, j, inst[max(0, j-60):j], inst[j:min(len(inst), j+20)])
				break
			}
		}
	}
	if os.Getenv("DEBUG_GBNF") != "" {
		t.Log(src)
	}
}
