package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestInputExitStatus: the one rule for inputs (readInput, input.refuse),
// command by command. A file a flag or an argument names that is missing,
// unreadable or malformed exits 3, as a missing model does; the same
// malformed text inline on the command line is a usage error, 2.
// grammar check's own --grammar or --json-schema that does not compile is
// such an input, not a refused file of its report (exit 0 before).
func TestInputExitStatus(t *testing.T) {
	model := storiesModel(t)
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	absent := filepath.Join(dir, "absent")
	badGBNF := write("bad.gbnf", "root ::= \"a\"\nx ::= (")
	refused := write("refused.json", `{"type":"array","uniqueItems":true}`)
	notObject := write("list.json", `[1]`)
	instance := write("instance.json", `{"a": 1}`)
	msgs := `[{"role": "user", "content": "hi"}]`
	tmpl := write("t.jinja", "{% for m in messages %}{{ m.content }}{% endfor %}")
	run := []string{"run", "-m", model, "-p", "Once", "-n", "2"}
	check := []string{"grammar", "check", "--model", model}
	tests := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"run --prompt-file missing", []string{"run", "-m", model, "--prompt-file", absent}, exitBadFile, "--prompt-file: open " + absent},
		{"run --prompt-file empty", []string{"run", "-m", model, "--prompt-file", write("empty.txt", "\n")}, exitBadFile, "is empty"},
		{"run --json-schema missing", append(run, "--json-schema", absent), exitBadFile, "--json-schema: open " + absent},
		{"run --json-schema refused, file", append(run, "--json-schema", refused), exitBadFile, "uniqueItems"},
		{"run --json-schema refused, inline", append(run, "--json-schema", `{"type":"array","uniqueItems":true}`), exitUsage, "uniqueItems"},
		{"run --grammar missing", append(run, "--grammar", absent), exitBadFile, "--grammar: open " + absent},
		{"run --grammar unparsable, file", append(run, "--grammar", badGBNF), exitBadFile, "--grammar " + badGBNF + ": "},
		{"run --grammar unparsable, inline", append(run, "--grammar", `root ::= (`), exitUsage, "--grammar: "},
		{"run --prediction missing", append(run, "--prediction", absent), exitBadFile, "--prediction: open " + absent},
		{"run --sampler-config @missing", append(run, "--sampler-config", "@"+absent), exitBadFile, "--sampler-config: open " + absent},
		{"run --sampler-config @file not an object", append(run, "--sampler-config", "@"+notObject), exitBadFile, "not a JSON object"},
		{"run --sampler-config inline not an object", append(run, "--sampler-config", "[1]"), exitUsage, "not a JSON object"},
		{"perplexity --file missing", []string{"perplexity", "-m", model, "--file", absent}, exitBadFile, "--file: open " + absent},
		{"embed --file missing", []string{"embed", "-m", model, "--file", absent}, exitBadFile, "--file: open " + absent},
		{"template --template missing", []string{"template", "render", "--template", absent, "--messages", msgs}, exitBadFile,
			"--template: open " + absent},
		{"template --messages @missing", []string{"template", "render", "--template", tmpl, "--messages", "@" + absent}, exitBadFile,
			"--messages: open " + absent},
		{"template --messages @file not messages", []string{"template", "render", "--template", tmpl, "--messages", "@" + notObject},
			exitBadFile, "--messages: message 0 is not a JSON object"},
		{"template --messages inline not messages", []string{"template", "render", "--template", tmpl, "--messages", "[1]"},
			exitUsage, "--messages: message 0 is not a JSON object"},
		{"grammar check instance missing", append(check, "--grammar", `root ::= "a"`, absent), exitBadFile, "open " + absent},
		{"grammar check --grammar missing", append(check, "--grammar", absent, instance), exitBadFile, "--grammar: open " + absent},
		{"grammar check --grammar unparsable, file", append(check, "--grammar", badGBNF, instance), exitBadFile, "line 2, column 8"},
		{"grammar check --grammar unparsable, inline", append(check, "--grammar", `root ::= (`, instance), exitUsage, "--grammar: "},
		{"grammar check --json-schema refused, file", append(check, "--json-schema", refused, instance), exitBadFile, "uniqueItems"},
		{"grammar check --json-schema refused, inline", append(check, "--json-schema", `{"uniqueItems":true}`, instance), exitUsage,
			"uniqueItems"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := runIn(t, "", tc.args...)
			assert.Equal(t, tc.code, code, "stderr: %s", stderr)
			assert.Contains(t, stderr, tc.msg)
			assert.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
			assert.Empty(t, stdout)
		})
	}
}
