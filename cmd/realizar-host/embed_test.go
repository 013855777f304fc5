package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEmbedCommand: embed prints one unit-length vector per text, the same
// values as --json and as --file's lines, different for different texts
// and pooling types; the file's missing pooling type, an unknown or rank
// --pooling and no text are usage errors.
func TestEmbedCommand(t *testing.T) {
	model := storiesModel(t)
	texts := []string{"Once upon a time", "Lily saw a big red ball"}
	out, stderr, code := runIn(t, "", append([]string{"embed", "-m", model, "--pooling", "mean"}, texts...)...)
	require.Equal(t, 0, code, stderr)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Len(t, lines, 2)
	var vecs [][]float32
	for _, line := range lines {
		var v []float32
		var sum float64
		for _, f := range strings.Fields(line) {
			x, err := strconv.ParseFloat(f, 32)
			require.NoError(t, err)
			v = append(v, float32(x))
			sum += x * x
		}
		assert.Len(t, v, 64, "stories260K's n_embd")
		assert.InDelta(t, 1, math.Sqrt(sum), 1e-5, "unit length")
		vecs = append(vecs, v)
	}
	assert.NotEqual(t, vecs[0], vecs[1])

	out, stderr, code = runIn(t, "", append([]string{"embed", "-m", model, "--pooling", "mean", "--json"}, texts...)...)
	require.Equal(t, 0, code, stderr)
	var doc embedDoc
	require.NoError(t, json.Unmarshal([]byte(out), &doc))
	assert.Equal(t, "list", doc.Object)
	assert.Equal(t, "stories260K", doc.Model)
	assert.Equal(t, "mean", doc.Pooling)
	require.Len(t, doc.Data, 2)
	for i := range texts {
		assert.Equal(t, i, doc.Data[i].Index)
		assert.Equal(t, vecs[i], doc.Data[i].Embedding, "text %d: --json and the text form", i)
	}
	assert.Positive(t, doc.Usage.PromptTokens)
	assert.Equal(t, doc.Usage.PromptTokens, doc.Usage.TotalTokens)

	file := filepath.Join(t.TempDir(), "texts.txt")
	require.NoError(t, os.WriteFile(file, []byte(texts[0]+"\n\n"+texts[1]+"\r\n"), 0o644))
	fromFile, stderr, code := runIn(t, "", "embed", "-m", model, "--pooling", "mean", "--file", file)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, out0(lines), fromFile, "--file's lines, the empty one skipped")

	last, stderr, code := runIn(t, "", "embed", "-m", model, "--pooling", "last", texts[0])
	require.Equal(t, 0, code, stderr)
	assert.NotEqual(t, lines[0]+"\n", last, "last pooling differs from mean")

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"embed", "-m", model, texts[0]}, "declares no pooling type"},
		{[]string{"embed", "-m", model, "--pooling", "max", texts[0]}, `--pooling "max": choose mean, cls or last` + "\n"},
		{[]string{"embed", "-m", model, "--pooling", "rank", texts[0]}, "rank"},
		{[]string{"embed", "-m", model, "--pooling", "none", texts[0]}, "one vector per token"},
		{[]string{"embed", "-m", model, "--pooling", "mean"}, "nothing to embed"},
		{[]string{"embed", "-m", model, "--pooling", "mean", "--file", file, "x"}, "not both"},
		{[]string{"embed", "-m", model, "--pooling", "mean", ""}, "input 0 is empty"},
		{[]string{"embed", "-m", model, "--pooling", "mean", "x", ""}, "input 1 is empty"},
	} {
		_, stderr, code := runIn(t, "", tc.args...)
		assert.Equal(t, exitUsage, code, "%v: %s", tc.args, stderr)
		assert.Contains(t, stderr, tc.want, tc.args)
	}
	_, stderr, code = runIn(t, "", "embed", "-m", model, "--pooling", "mean", "--ctx-size", "4", texts[1])
	assert.Equal(t, exitContext, code, stderr)
	assert.Contains(t, stderr, "input 0 (counting from 0, as --json's index) is ")
	assert.Contains(t, stderr, "the context 4")
}

// out0 joins lines as embed prints them.
func out0(lines []string) string { return strings.Join(lines, "\n") + "\n" }

// TestServeEmbeddings: serve --pooling last answers /v1/embeddings; without
// it, on a file that declares no pooling type, the endpoint is a 400 and
// the log says why.
func TestServeEmbeddings(t *testing.T) {
	bin := buildBinary(t)
	model := serveModel(t)
	_, base, _ := startServe(t, bin, "--model", model, "--pooling", "last")
	code, b := post(t, base+"/v1/embeddings", "", "application/json", []byte(`{"input": ["Hello", "there"], "model": "tiny"}`))
	require.Equal(t, 200, code, string(b))
	var r struct {
		Data []struct {
			Embedding []float32 `json:"embedding"`
		} `json:"data"`
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
		} `json:"usage"`
	}
	require.NoError(t, json.Unmarshal(b, &r))
	require.Len(t, r.Data, 2)
	assert.Len(t, r.Data[0].Embedding, 64)
	assert.Positive(t, r.Usage.PromptTokens)

	_, base, logs := startServe(t, bin, "--model", model)
	code, b = post(t, base+"/v1/embeddings", "", "application/json", []byte(`{"input": "Hello"}`))
	assert.Equal(t, 400, code, string(b))
	assert.Contains(t, string(b), "embeddings_unsupported")
	assert.Contains(t, logs.String(), "embeddings off")
}
