package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRunFormatJSON: --format json makes stories260K (a model of stories,
// not of JSON) answer with a JSON object at several seeds and
// temperatures, the turn ended by end of generation even at max-tokens;
// without the flag the same runs are prose.
func TestRunFormatJSON(t *testing.T) {
	model := storiesModel(t)
	for _, run := range []struct {
		seed, temp string
		n          int
	}{{"1", "0", 30}, {"2", "0.8", 30}, {"3", "1.2", 12}, {"4", "1.5", 60}} {
		t.Run(fmt.Sprintf("seed=%s/temperature=%s/n=%d", run.seed, run.temp, run.n), func(t *testing.T) {
			args := []string{"run", "-m", model, "-p", "Once upon a time", "-n", fmt.Sprint(run.n), "--seed", run.seed,
				"--temperature", run.temp}
			out, stderr, code := runIn(t, "", append(args, "--format", "json")...)
			require.Equal(t, 0, code, stderr)
			// at the budget too: its last token is kept for end of generation
			assert.Contains(t, stderr, "| stop eog |")
			var obj map[string]any
			require.NoError(t, json.Unmarshal([]byte(out), &obj), "%q", out)

			plain, stderr, code := runIn(t, "", args...)
			require.Equal(t, 0, code, stderr)
			assert.False(t, json.Valid([]byte(plain)), "without --format json: %q", plain)
		})
	}
}

// TestChatFormatJSON: every reply of a chat in JSON mode is an object
// (the processor starts afresh each turn).
func TestChatFormatJSON(t *testing.T) {
	model := storiesModel(t)
	out, stderr, code := runIn(t, "Hello there\nTell me a story\n/exit\n",
		"chat", "-m", model, "-n", "24", "--seed", "5", "--format", "json")
	require.Equal(t, 0, code, stderr)
	// a reply may hold newlines of its own: read the objects one by one
	dec := json.NewDecoder(strings.NewReader(out))
	n := 0
	for dec.More() {
		var obj map[string]any
		require.NoError(t, dec.Decode(&obj), "%q", out)
		n++
	}
	assert.Equal(t, 2, n, "one object a turn: %q", out)
}

func TestFormatFlagErrors(t *testing.T) {
	model := storiesModel(t)
	for _, tt := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--format", "yaml"}, `--format "yaml": must be text or json`},
		// a structured output ends with an end-of-generation token, which
		// --ignore-eos masks: a usage error, before the model loads
		{[]string{"--format", "json", "--ignore-eos"}, "--ignore-eos cannot go with --format json"},
		{[]string{"--json-schema", `{"type": "object"}`, "--ignore-eos"}, "--ignore-eos cannot go with --json-schema"},
		{[]string{"--grammar", `root ::= "a"`, "--ignore-eos"}, "--ignore-eos cannot go with --grammar"},
	} {
		_, stderr, code := runIn(t, "", append([]string{"run", "-m", model, "-p", "x", "-n", "4"}, tt.args...)...)
		assert.Equal(t, exitUsage, code, stderr)
		assert.Contains(t, stderr, tt.msg)
	}
}
