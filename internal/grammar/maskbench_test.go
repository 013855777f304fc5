package grammar_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/internal/grammar"
	"github.com/realizar-host/realizar-host/internal/testenv"
)

// maskbenchDir is ../shared/maskbench (testenv: a failure under CI).
func maskbenchDir(t testing.TB) string { return testenv.Shared(t, "maskbench") }

// TestMaskBenchBytes runs the MaskBench schemas byte by byte (no
// vocabulary): no invalid instance may be accepted.
func TestMaskBenchBytes(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(maskbenchDir(t), "*.json"))
	require.NoError(t, err)
	v, _ := byteVocab(t)
	compiled, validRejected, valid, invalid, invalidAccepted, warned := 0, 0, 0, 0, 0, 0
	reasons := map[string]int{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		require.NoError(t, err)
		var mb struct {
			Schema json.RawMessage `json:"schema"`
			Tests  []struct {
				Valid bool            `json:"valid"`
				Data  json.RawMessage `json:"data"`
			} `json:"tests"`
		}
		if json.Unmarshal(raw, &mb) != nil || mb.Schema == nil {
			continue
		}
		src, ws, err := grammar.FromJSONSchemaWarnings(mb.Schema)
		if err != nil {
			var se *grammar.SchemaError
			if errors.As(err, &se) {
				reasons[se.Keyword]++
			} else {
				reasons["other"]++
			}
			continue
		}
		g, err := grammar.Compile(src)
		if !assert.NoError(t, err, "%s: generated grammar does not compile", f) {
			continue
		}
		compiled++
		if len(ws) > 0 {
			warned++
		}
		m := grammar.NewMatcher(g, v)
		for i, tc := range mb.Tests {
			inst, err := grammar.SerializeInstance(mb.Schema, tc.Data)
			require.NoError(t, err)
			m.Reset()
			ok := m.AcceptBytes([]byte(inst)) == nil && m.Done()
			if tc.Valid {
				valid++
				if !ok {
					validRejected++
					t.Logf("valid rejected: %s #%d: %.200s", filepath.Base(f), i, inst)
				}
			} else {
				invalid++
			}
			if !tc.Valid && ok {
				invalidAccepted++
				t.Errorf("invalid accepted: %s #%d: %.300s", filepath.Base(f), i, inst)
			}
		}
	}
	type kv struct {
		k string
		n int
	}
	var rs []kv
	for k, n := range reasons {
		rs = append(rs, kv{k, n})
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i].n > rs[j].n })
	t.Logf("%d/%d compiled (%d with a format JSON Schema does not define, unenforced); valid rejected %d/%d; invalid accepted %d/%d; refusals %v",
		compiled, len(files), warned, validRejected, valid, invalidAccepted, invalid, rs)
}
