package main

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRunDrafterPlugin: --drafter gives the plain text and tokens with an
// embedded drafter or a module file; a drafter that fails costs its drafts,
// not the text (a warning on stderr); the flags are checked.
func TestRunDrafterPlugin(t *testing.T) {
	model := storiesModel(t)
	args := []string{"run", "-m", model, "-p", "Once upon a time", "-n", "200", "--sampler", "greedy", "--seed", "3", "--json"}
	var plain turnJSON
	out, stderr, code := runIn(t, "", args...)
	require.Equal(t, 0, code, stderr)
	require.NoError(t, json.Unmarshal([]byte(out), &plain))
	liar := filepath.Join("..", "..", "host", "testdata", "drafter.wasm")
	for _, tt := range []struct {
		args    []string
		drafts  bool   // some drafts accepted
		warning string // on stderr
	}{
		{[]string{"--drafter", "lookup"}, true, ""},
		{[]string{"--drafter", "lookup", "--drafter-config", `{"max_ngram":3}`, "--draft-max", "4"}, true, ""},
		{[]string{"--drafter", liar, "--drafter-config", `{"mode":0}`}, false, ""},
		{[]string{"--drafter", liar, "--drafter-config", `{"mode":1}`}, false, "plugin trapped"},
		{[]string{"--drafter", liar, "--drafter-config", `{"mode":3}`}, false, "token id out of range"},
	} {
		var spec turnJSON
		out, stderr, code := runIn(t, "", append(args, tt.args...)...)
		require.Equal(t, 0, code, stderr)
		require.NoError(t, json.Unmarshal([]byte(out), &spec))
		assert.Equal(t, plain.Tokens, spec.Tokens, tt.args)
		assert.Equal(t, plain.Text, spec.Text, tt.args)
		if tt.drafts {
			require.NotNil(t, spec.Drafts, tt.args)
			assert.Positive(t, spec.Drafts.Accepted, tt.args)
		}
		if tt.warning != "" {
			assert.Contains(t, stderr, "warning: --drafter "+liar+": ", tt.args)
			assert.Contains(t, stderr, tt.warning, tt.args)
		} else {
			assert.NotContains(t, stderr, "warning: --drafter", tt.args)
		}
	}
	for _, tt := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"--drafter", "lookup", "--lookup"}, exitUsage, "give one draft source"},
		{[]string{"--drafter-config", `{}`}, exitUsage, "--drafter-config needs --drafter"},
		{[]string{"--drafter", "lookup", "--drafter-config", `{`}, exitUsage, "--drafter-config: not valid JSON"},
		{[]string{"--drafter", "nosuch"}, exitBadPlugin, "not an embedded drafter (lookup)"},
		{[]string{"--drafter", "greedy"}, exitBadPlugin, "not a drafter"},
		{[]string{"--drafter", "lookup", "--drafter-config", `{"max_draft":99}`}, exitBadPlugin, "--drafter lookup: "},
	} {
		for _, sub := range [][]string{{"run", "-p", "x", "-n", "4"}, {"chat"}} {
			_, stderr, code = runIn(t, "", append(append(sub, "-m", model), tt.args...)...)
			assert.Equal(t, tt.code, code, sub, tt.args, stderr)
			assert.Contains(t, stderr, tt.msg, sub, tt.args)
		}
	}
}

// TestPluginCheckDrafter: plugin check runs a drafter's draft calls, and a
// drafter that fails is the check's failure.
func TestPluginCheckDrafter(t *testing.T) {
	out, stderr, code := runIn(t, "", "plugin", "check", "lookup", "--steps", "16")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "ok: drafter lookup 1.0.0 (ABI v2)")
	assert.Contains(t, out, "16 steps at vocab")
	liar := filepath.Join("..", "..", "host", "testdata", "drafter.wasm")
	_, stderr, code = runIn(t, "", "plugin", "check", liar, "--config", `{"mode":4}`)
	assert.Equal(t, exitBadPlugin, code, stderr)
	assert.Contains(t, stderr, "at most 32 were asked for")
}
