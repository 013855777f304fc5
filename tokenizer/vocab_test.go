package tokenizer

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/internal/testenv"
)

// vocabNames are the llama.cpp vocabularies this package must match.
var vocabNames = []string{"llama-spm", "llama-bpe", "qwen2", "gpt-2"}

// extraVectorVocabs are further llama.cpp vocabularies this package
// implements (phi-3: SentencePiece; mpt: the gpt-2 pre-tokenizer; qwen35).
var extraVectorVocabs = []string{"phi-3", "mpt", "qwen35"}

var (
	vocabCache   = map[string]*Tokenizer{}
	vocabCacheMu sync.Mutex
)

// loadVocab builds the tokenizer of ggml-vocab-<name>.gguf once per test
// binary.
func loadVocab(t testing.TB, name string) *Tokenizer {
	t.Helper()
	dir := testenv.VocabDir(t)
	vocabCacheMu.Lock()
	defer vocabCacheMu.Unlock()
	if tok, ok := vocabCache[name]; ok {
		return tok
	}
	tok, err := Open(filepath.Join(dir, "ggml-vocab-"+name+".gguf"))
	require.NoError(t, err)
	vocabCache[name] = tok
	return tok
}

// vector is one llama.cpp tokenizer test case.
type vector struct {
	text string
	ids  []int32
}

// readVectors parses <gguf>.inp (cases separated by a
// "\n__ggml_vocab_test__\n" line) and <gguf>.out (one case per line, ids
// separated by spaces).
func readVectors(t testing.TB, dir, name string) []vector {
	t.Helper()
	base := filepath.Join(dir, "ggml-vocab-"+name+".gguf")
	inp, err := os.ReadFile(base + ".inp")
	require.NoError(t, err)
	outp, err := os.ReadFile(base + ".out")
	require.NoError(t, err)
	const sep = "\n__ggml_vocab_test__\n"
	texts := strings.Split(strings.TrimSuffix(string(inp), sep), sep)
	lines := strings.Split(string(outp), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	require.Len(t, lines, len(texts), "%s: .inp and .out disagree on the number of cases", name)
	vs := make([]vector, len(texts))
	for i, s := range texts {
		vs[i].text = s
		for _, f := range strings.Fields(lines[i]) {
			id, err := strconv.ParseInt(f, 10, 32)
			require.NoError(t, err)
			vs[i].ids = append(vs[i].ids, int32(id))
		}
	}
	return vs
}

// TestVectors encodes every case of llama.cpp's tokenizer tests the way
// tests/test-tokenizer-0.cpp does (add_special=false, parse_special=false)
// and requires the exact ids.
func TestVectors(t *testing.T) {
	dir := testenv.VocabDir(t)
	for _, name := range append(vocabNames, extraVectorVocabs...) {
		t.Run(name, func(t *testing.T) {
			tok := loadVocab(t, name)
			vs := readVectors(t, dir, name)
			pass := 0
			for _, v := range vs {
				got := tok.Encode(v.text, EncodeOptions{})
				if equalIDs(got, v.ids) {
					pass++
					continue
				}
				t.Errorf("%q:\n got  %v\n want %v", v.text, got, v.ids)
			}
			t.Logf("%s: %d/%d vectors pass", name, pass, len(vs))
		})
	}
}

func equalIDs(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
