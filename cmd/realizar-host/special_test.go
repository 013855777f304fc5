package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// storiesBOSRun makes stories260K write its BOS, "<s>" (a control token,
// id 1): greedy past the end of its first story (--ignore-eos masks the
// </s> it would stop on), it begins the next one with <s> as its training
// text did, at the 342nd token.
var storiesBOSRun = []string{"run", "-p", "Once upon a time", "-n", "345", "--sampler", "greedy", "--ignore-eos"}

// TestRunControlTokens: run prints a generated control token as nothing,
// as llama-cli does, and as its text with --special; --json's text and
// logprobs follow the same rendering while its tokens keep the id.
func TestRunControlTokens(t *testing.T) {
	model := storiesModel(t)
	const story = `"Thank you, Lily! You are a good friend."`
	cases := []struct {
		name string
		args []string
		want string // the text around the BOS
	}{
		{"default", nil, story + " Once upon a"},
		{"special", []string{"--special"}, story + "<s> Once upon a"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append(append(slices.Clone(storiesBOSRun), "-m", model), c.args...)
			out, stderr, code := runIn(t, "", args...)
			require.Equal(t, 0, code, stderr)
			assert.Contains(t, out, c.want)
			assert.Equal(t, c.args != nil, strings.Contains(out, "<s>"), "stdout: %q", out)

			out, stderr, code = runIn(t, "", append(args, "--json", "--logprobs", "1")...)
			require.Equal(t, 0, code, stderr)
			var doc turnJSON
			require.NoError(t, json.Unmarshal([]byte(out), &doc), out)
			assert.Contains(t, doc.Text, c.want)
			at := slices.Index(doc.Tokens, 1)
			require.Positive(t, at, "the BOS id is generated: %v", doc.Tokens)
			require.Len(t, doc.Logprobs, len(doc.Tokens))
			wantText := ""
			if c.args != nil {
				wantText = "<s>"
			}
			assert.Equal(t, wantText, doc.Logprobs[at].Text, "the BOS's logprob text")
			var joined strings.Builder
			for _, lp := range doc.Logprobs {
				joined.WriteString(lp.Text)
			}
			assert.Equal(t, doc.Text, joined.String(), "the logprobs' texts make up the text")
		})
	}
}

// TestChatSpecialFlag: chat takes --special too (it shares run's turn
// flags and generator).
func TestChatSpecialFlag(t *testing.T) {
	_, stderr, code := runIn(t, "/exit\n", "chat", "-m", storiesModel(t), "--special")
	assert.Equal(t, 0, code, stderr)
}
