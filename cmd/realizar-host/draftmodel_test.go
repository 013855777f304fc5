package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRunDraftModel: run --draft-model with the model as its own draft
// gives the plain greedy tokens and text with nearly every draft accepted;
// a draft model of another vocabulary is refused at load (exit 3, naming
// --draft-model and what differs); the flag is one draft source of three.
func TestRunDraftModel(t *testing.T) {
	model := storiesModel(t)
	args := []string{"run", "-m", model, "-p", "Once upon a time", "-n", "120", "--sampler", "greedy", "--seed", "3", "--json"}
	plain, spec := runPlainAndDrafted(t, args, model)
	assert.Equal(t, plain.Tokens, spec.Tokens)
	assert.Equal(t, plain.Text, spec.Text)
	require.NotNil(t, spec.Drafts)
	assert.GreaterOrEqual(t, float64(spec.Drafts.Accepted), 0.9*float64(spec.Drafts.Drafted), "%+v", spec.Drafts)

	_, stderr, code := runIn(t, "", "run", "-m", model, "-p", "Once upon a time", "-n", "4", "--draft-model", serveModel(t))
	assert.Equal(t, exitBadFile, code, stderr)
	assert.Contains(t, stderr, "--draft-model ")
	assert.Contains(t, stderr, "32000 tokens, the target has 512")
	for _, tt := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--lookup", "--draft-model", model}, "give one draft source"},
		{[]string{"--draft-model", "/absent/draft.gguf"}, "--draft-model: "},
	} {
		for _, sub := range [][]string{{"run", "-p", "x"}, {"chat"}} {
			_, stderr, code = runIn(t, "", append(append(sub, "-m", model), tt.args...)...)
			assert.NotEqual(t, 0, code, sub, tt.args, stderr)
			assert.Contains(t, stderr, tt.msg, sub, tt.args)
		}
	}
	out, stderr, code := runIn(t, "/exit\n", "chat", "-m", model, "--draft-model", model, "-n", "8")
	require.Equal(t, 0, code, stderr+out)
}

// TestBenchSpecDraftModel: bench --spec --draft-model adds the draft
// model's mode, whose tokens bench checks against plain decoding.
func TestBenchSpecDraftModel(t *testing.T) {
	model := storiesModel(t)
	out, stderr, code := runIn(t, "", "bench", "-m", model, "--prompt-tokens", "16", "--gen-tokens", "24",
		"--repetitions", "1", "--spec", "--draft-model", model, "--json")
	require.Equal(t, 0, code, stderr)
	var b benchResult
	require.NoError(t, json.Unmarshal([]byte(out), &b))
	require.Len(t, b.Spec, len(specModes)+1)
	self := b.Spec[len(specModes)]
	assert.Equal(t, "draft model", self.Mode)
	assert.Positive(t, self.Accepted)
	_, stderr, code = runIn(t, "", "bench", "-m", model, "--draft-model", model)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "--draft-model needs --spec")
}

// TestServeDraftModel: serve --draft-model drafts for every request by
// default (the model as its own draft: its drafts accepted), a request
// turns it off, and --spec draft-model without the file is a usage error.
func TestServeDraftModel(t *testing.T) {
	bin := buildBinary(t)
	model := serveModel(t)
	_, base, logs := startServe(t, bin, "--model", model, "--draft-model", model, "--parallel", "2")
	complete := func(extra string) map[string]any {
		body := `{"prompt": "Once upon a time", "max_tokens": 40, "temperature": 0, "ignore_eos": true` + extra + `}`
		code, b := post(t, base+"/v1/completions", "", "application/json", []byte(body))
		require.Equal(t, http.StatusOK, code, "%s\n%s", b, logs)
		var r map[string]any
		require.NoError(t, json.Unmarshal(b, &r))
		return r
	}
	drafted := complete("")
	plain := complete(`, "realizar": {"speculative": {"draft_model": false}}`)
	text := func(r map[string]any) string { return r["choices"].([]any)[0].(map[string]any)["text"].(string) }
	assert.Equal(t, text(plain), text(drafted))
	d, ok := drafted["realizar"].(map[string]any)["drafts"].(map[string]any)
	require.True(t, ok, "%v", drafted)
	assert.Positive(t, d["accepted"])
	assert.Nil(t, plain["realizar"].(map[string]any)["drafts"])
	code, b := post(t, base+"/v1/completions", "", "application/json",
		[]byte(`{"prompt": "x", "max_tokens": 4, "realizar": {"speculative": {"draft_model": true, "lookup": true}}}`))
	assert.Equal(t, http.StatusBadRequest, code, "%s", b)
	assert.Contains(t, string(b), "give one draft source")

	_, stderr, code := runIn(t, "", "serve", "-m", model, "--spec", "draft-model")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "--spec draft-model needs --draft-model FILE")
	_, stderr, code = runIn(t, "", "serve", "-m", model, "--addr", "127.0.0.1:0", "--draft-model", storiesModel(t))
	assert.Equal(t, exitBadFile, code)
	assert.True(t, strings.Contains(stderr, "--draft-model") && strings.Contains(stderr, fmt.Sprint(512)), stderr)
}

// runPlainAndDrafted runs args (a run --json command) as given and again
// with --draft-model draft, and returns both turns.
func runPlainAndDrafted(t *testing.T, args []string, draft string) (plain, spec turnJSON) {
	t.Helper()
	out, stderr, code := runIn(t, "", args...)
	require.Equal(t, 0, code, stderr)
	require.NoError(t, json.Unmarshal([]byte(out), &plain))
	out, stderr, code = runIn(t, "", append(args, "--draft-model", draft)...)
	require.Equal(t, 0, code, stderr)
	require.NoError(t, json.Unmarshal([]byte(out), &spec))
	return plain, spec
}
