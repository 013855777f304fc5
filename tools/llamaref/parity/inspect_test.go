package parity

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/tools/llamaref/internal/reftest"
	"github.com/realizar-host/realizar-host/tools/llamaref/ref"
)

var (
	cliOnce sync.Once
	cliDir  string // removed by TestMain
	cliBin  string
	cliErr  error
)

// cliBinary builds cmd/realizar-host once per test binary.
func cliBinary(t *testing.T) string {
	t.Helper()
	cliOnce.Do(func() {
		root, err := ref.RepoRoot()
		if err != nil {
			cliErr = err
			return
		}
		if cliDir, cliErr = os.MkdirTemp("", "llamaref-cli-"); cliErr != nil {
			return
		}
		cliBin = filepath.Join(cliDir, "realizar-host")
		build := exec.Command("go", "build", "-o", cliBin, "./cmd/realizar-host")
		build.Dir = root
		if out, err := build.CombinedOutput(); err != nil {
			cliErr = fmt.Errorf("go build ./cmd/realizar-host: %w: %s", err, out)
		}
	})
	require.NoError(t, cliErr)
	return cliBin
}

// The CLI's prompt path (encodePrompt, through `inspect --tokens`, as
// run and chat tokenize a prompt) gives llama.cpp's ids for a prompt that
// itself starts with the BOS text: both BOS ids, the one added and the one
// parsed (issue 22.6's held-back case; the CLI used to drop the added one).
func TestCLIPromptBOS(t *testing.T) {
	l := reftest.Lib(t)
	bin := cliBinary(t)
	for _, name := range []string{"llama-spm", "phi-3"} {
		t.Run(name, func(t *testing.T) {
			m, tok := openVocabPair(t, l, name)
			require.True(t, tok.AddBOS())
			text := tok.TokenText(tok.BOS()) + "Hello world"
			want, err := m.Tokenize(text, true, true)
			require.NoError(t, err)
			require.Equal(t, []int32{tok.BOS(), tok.BOS()}, want[:2], "llama.cpp keeps both")
			out, err := exec.Command(bin, "inspect", "--json", "--tokens", text, reftest.Vocab(t, l, name)).Output()
			require.NoError(t, err)
			var doc struct{ Tokens []struct{ ID int32 } }
			require.NoError(t, json.Unmarshal(out, &doc), "%s", out)
			got := make([]int32, len(doc.Tokens))
			for i, tk := range doc.Tokens {
				got[i] = tk.ID
			}
			assert.Equal(t, want, got)
		})
	}
}

// `realizar-host inspect --json` reports, for every source model and every
// llama.cpp-quantized file, the tensor type histogram (and bytes per type
// when it prints them) that ggml's gguf reader gives.
func TestInspectHistogram(t *testing.T) {
	l := reftest.Lib(t)
	bin := cliBinary(t)

	var paths []string
	for _, s := range sourceModels(t, l) {
		paths = append(paths, s.path)
	}
	for _, q := range quantizedFiles(t, l) {
		paths = append(paths, q.path)
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			want, err := l.ReadGGUF(path)
			require.NoError(t, err)
			wantCount, wantBytes := map[string]int64{}, map[string]int64{}
			for _, ti := range want.Tensors {
				name := strings.ToLower(typeName(l, ti.Type))
				wantCount[name]++
				wantBytes[name] += ti.Size
			}

			cmd := exec.Command(bin, "inspect", "--json", path)
			out, err := cmd.Output()
			require.NoError(t, err, "realizar-host inspect --json %s", path)
			var doc any
			require.NoError(t, json.Unmarshal(out, &doc), "inspect --json output: %s", out)
			gotCount, gotBytes, ok := findHistogram(doc, wantCount)
			require.True(t, ok, "no type histogram found in inspect --json output: %s", out)
			assert.Equal(t, wantCount, gotCount, "tensors by type")
			if gotBytes != nil {
				assert.Equal(t, wantBytes, gotBytes, "bytes by type")
			}
		})
	}
}

// findHistogram looks through inspect's JSON for an object keyed by ggml
// type names (any case) whose values are tensor counts, or objects holding a
// count ("count", "tensors", "n") and optionally "bytes". The names it may
// use are those of known (plus any ggml type name it is given).
func findHistogram(doc any, known map[string]int64) (count, bytes map[string]int64, ok bool) {
	switch v := doc.(type) {
	case map[string]any:
		if c, b, ok := asHistogram(v, known); ok {
			return c, b, true
		}
		for _, child := range v {
			if c, b, ok := findHistogram(child, known); ok {
				return c, b, true
			}
		}
	case []any:
		// A list of {"type": name, "count": n, "bytes": b} rows.
		rows := map[string]any{}
		for _, e := range v {
			m, isMap := e.(map[string]any)
			if !isMap {
				break
			}
			name, _ := m["type"].(string)
			if name == "" {
				break
			}
			rows[name] = m
		}
		if len(rows) == len(v) && len(v) > 0 {
			if c, b, ok := asHistogram(rows, known); ok {
				return c, b, true
			}
		}
		for _, child := range v {
			if c, b, ok := findHistogram(child, known); ok {
				return c, b, true
			}
		}
	}
	return nil, nil, false
}

func asHistogram(m map[string]any, known map[string]int64) (count, bytes map[string]int64, ok bool) {
	if len(m) == 0 {
		return nil, nil, false
	}
	count = map[string]int64{}
	withBytes := true
	bytes = map[string]int64{}
	for k, v := range m {
		name := strings.ToLower(k)
		if _, isType := known[name]; !isType && !ggmlTypeName(name) {
			return nil, nil, false
		}
		switch x := v.(type) {
		case float64:
			count[name] = int64(x)
			withBytes = false
		case map[string]any:
			n, found := firstNumber(x, "count", "tensors", "n", "n_tensors")
			if !found {
				return nil, nil, false
			}
			count[name] = n
			if b, found := firstNumber(x, "bytes", "size"); found {
				bytes[name] = b
			} else {
				withBytes = false
			}
		default:
			return nil, nil, false
		}
	}
	if !withBytes {
		bytes = nil
	}
	return count, bytes, true
}

func firstNumber(m map[string]any, keys ...string) (int64, bool) {
	for _, k := range keys {
		if f, ok := m[k].(float64); ok {
			return int64(f), true
		}
	}
	return 0, false
}

func ggmlTypeName(s string) bool {
	switch s {
	case "f32", "f16", "bf16", "q4_0", "q4_1", "q5_0", "q5_1", "q8_0", "q8_1",
		"q2_k", "q3_k", "q4_k", "q5_k", "q6_k", "q8_k":
		return true
	}
	return false
}
