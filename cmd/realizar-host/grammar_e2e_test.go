package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// run --json-schema on stories260K: at temperatures 0-1.5 and several
// seeds the answer is JSON valid against the schema; --grammar matches
// its grammar; a refused schema or grammar is a usage error naming the
// keyword or the line and column.
func TestRunJSONSchemaStories(t *testing.T) {
	model := storiesModel(t)
	schema := `{"type":"object","properties":{"hero":{"type":"string","minLength":1,"maxLength":16},` +
		`"age":{"type":"integer","minimum":1,"maximum":99},"pets":{"type":"array","items":{"enum":["cat","dog"]},"maxItems":2}},` +
		`"required":["hero","age"],"additionalProperties":false}`
	var doc any
	require.NoError(t, json.Unmarshal([]byte(schema), &doc))
	c := jsonschema.NewCompiler()
	require.NoError(t, c.AddResource("s.json", doc))
	v, err := c.Compile("s.json")
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "s.json")
	require.NoError(t, os.WriteFile(file, []byte(schema), 0o644))
	for _, temp := range []string{"0", "0.8", "1.5"} {
		for _, seed := range []int{1, 2} {
			t.Run(fmt.Sprintf("t%s-seed%d", temp, seed), func(t *testing.T) {
				out, stderr, code := runIn(t, "", "run", "-m", model, "-p", "Once upon a time", "-n", "200",
					"--temperature", temp, "--seed", fmt.Sprint(seed), "--json-schema", file)
				require.Equal(t, 0, code, stderr)
				assert.Contains(t, stderr, "| stop eog |")
				inst, err := jsonschema.UnmarshalJSON(strings.NewReader(out))
				require.NoError(t, err, out)
				assert.NoError(t, v.Validate(inst), out)
			})
		}
	}
	t.Run("grammar", func(t *testing.T) {
		g := filepath.Join(t.TempDir(), "g.gbnf")
		require.NoError(t, os.WriteFile(g, []byte(`root ::= "Tom " ("ran" | "sat") " " [a-z]{1,8} "."`+"\n"), 0o644))
		for _, seed := range []string{"1", "2", "3"} {
			out, stderr, code := runIn(t, "", "run", "-m", model, "-p", "Once", "-n", "40", "--temperature", "1.2", "--seed", seed, "--grammar", g)
			require.Equal(t, 0, code, stderr)
			assert.Regexp(t, `^Tom (ran|sat) [a-z]{1,8}\.$`, out)
		}
		// The grammar as text, as --json-schema takes a schema.
		out, stderr, code := runIn(t, "", "run", "-m", model, "-p", "Once", "-n", "40", "--seed", "1",
			"--grammar", `root ::= "Tom " ("ran" | "sat") "."`)
		require.Equal(t, 0, code, stderr)
		assert.Regexp(t, `^Tom (ran|sat)\.$`, out)
		_, stderr, code = runIn(t, "", "run", "-m", model, "-p", "x", "--grammar", `root ::= (`)
		assert.Equal(t, exitUsage, code)
		assert.Contains(t, stderr, "--grammar: ")
	})
	t.Run("README", func(t *testing.T) {
		// The README's example, run as written from the repository root
		// (three random seeds): bounded, it completes on the demo model.
		b, err := os.ReadFile("../../README.md")
		require.NoError(t, err)
		var line string
		for _, l := range strings.Split(string(b), "\n") {
			if l = strings.TrimSpace(l); strings.HasPrefix(l, "realizar-host run -m models/stories260K.gguf") && strings.Contains(l, "--json-schema '") {
				line = l
			}
		}
		require.NotEmpty(t, line, "README has no run --json-schema line on models/stories260K.gguf")
		dir := t.TempDir()
		require.NoError(t, os.Symlink(e2eBinary(t), filepath.Join(dir, "realizar-host")))
		for range 3 {
			cmd := exec.Command("bash", "-c", line)
			cmd.Dir = "../.."
			cmd.Env = append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"), envModel+"=")
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			require.NoError(t, cmd.Run(), stderr.String())
			assert.Contains(t, stderr.String(), "| stop eog |")
			var v struct {
				Name *string `json:"name"`
				Age  *int    `json:"age"`
			}
			require.NoError(t, json.Unmarshal([]byte(stdout.String()), &v), stdout.String())
			require.NotNil(t, v.Name)
			require.NotNil(t, v.Age)
			assert.LessOrEqual(t, len([]rune(*v.Name)), 16)
			assert.LessOrEqual(t, *v.Age, 20)
		}
	})
	t.Run("refused", func(t *testing.T) {
		_, stderr, code := runIn(t, "", "run", "-m", model, "-p", "x", "--json-schema", `{"type":"array","uniqueItems":true}`)
		assert.Equal(t, exitUsage, code)
		assert.Contains(t, stderr, "uniqueItems")
		g := filepath.Join(t.TempDir(), "bad.gbnf")
		require.NoError(t, os.WriteFile(g, []byte("root ::= \"a\"\nx ::= ("), 0o644))
		_, stderr, code = runIn(t, "", "run", "-m", model, "-p", "x", "--grammar", g)
		assert.Equal(t, exitBadFile, code, "a grammar file that does not parse is a bad input file")
		assert.Contains(t, stderr, "line 2, column 8")
	})
}

// grammar check on bare instances and a MaskBench-shaped file, with the
// stories260K vocabulary.
func TestGrammarCheck(t *testing.T) {
	model := storiesModel(t)
	dir := t.TempDir()
	schema := filepath.Join(dir, "s.json")
	require.NoError(t, os.WriteFile(schema, []byte(`{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]}`), 0o644))
	good := filepath.Join(dir, "good.json")
	require.NoError(t, os.WriteFile(good, []byte(`{"a": 12}`), 0o644))
	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"a": "x"}`), 0o644))
	mb := filepath.Join(dir, "mb.json")
	require.NoError(t, os.WriteFile(mb, []byte(`{"schema":{"enum":["x","y"]},"tests":[{"valid":true,"data":"y"},{"valid":false,"data":"z"}]}`), 0o644))
	var rep struct {
		Files []struct {
			SchemaOK bool `json:"schema_ok"`
			Tests    []struct{ Valid, Accepted bool }
		} `json:"files"`
		TBM map[string]float64 `json:"tbm_us"`
	}
	var out, stderr string
	var code int
	// --json-schema: a file or inline JSON, as run --json-schema.
	schemaText, err := os.ReadFile(schema)
	require.NoError(t, err)
	for _, s := range []string{schema, string(schemaText)} {
		out, stderr, code = runIn(t, "", "grammar", "check", "--model", model, "--json-schema", s, "--json", good, bad)
		require.Equal(t, 0, code, stderr)
		require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
		require.Len(t, rep.Files, 2)
		assert.True(t, rep.Files[0].Tests[0].Accepted, s)
		assert.False(t, rep.Files[1].Tests[0].Accepted, s)
		assert.Greater(t, rep.TBM["max"], 0.0)
	}
	for _, reuse := range [][]string{nil, {"--reuse"}} {
		out, stderr, code = runIn(t, "", append([]string{"grammar", "check", "--model", model, mb}, reuse...)...)
		require.Equal(t, 0, code, stderr)
		assert.Contains(t, out, "compiled 1/1; valid rejected 0/1; invalid accepted 0/1", reuse)
	}
	// --grammar: a file or inline GBNF, as run --grammar.
	gbnf := `root ::= "{\"a\":" [0-9]+ "}"`
	gfile := filepath.Join(dir, "g.gbnf")
	require.NoError(t, os.WriteFile(gfile, []byte(gbnf), 0o644))
	for _, g := range []string{gbnf, gfile} {
		out, stderr, code = runIn(t, "", "grammar", "check", "--model", model, "--grammar", g, "--json", good, bad)
		require.Equal(t, 0, code, stderr)
		require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
		require.Len(t, rep.Files, 2)
		assert.True(t, rep.Files[0].Tests[0].Accepted, g)
		assert.False(t, rep.Files[1].Tests[0].Accepted, g)
	}
}

// run --json-schema at temperature 1.5 under --max-tokens 64, 20 seeds,
// schemas with unbounded strings and arrays: the grammar processor closes
// the value within the budget, so every answer parses and validates,
// whether the turn ended by end of generation or by the budget.
func TestRunJSONSchemaClosesWithinBudget(t *testing.T) {
	model := storiesModel(t)
	for i, schema := range []string{
		`{"type":"object","properties":{"story":{"type":"string"},"words":{"type":"array","items":{"type":"string"}}},"required":["story","words"]}`,
		`{"type":"array","items":{"type":"object","properties":{"name":{"type":"string","minLength":3},"n":{"type":"array","items":{"type":"number"}}},"required":["name","n"]},"minItems":1}`,
		`{"type":"object","properties":{"a":{"type":"object","additionalProperties":{"type":"string"}},"b":{"type":"string"}},"required":["a","b"]}`,
	} {
		var doc any
		require.NoError(t, json.Unmarshal([]byte(schema), &doc))
		c := jsonschema.NewCompiler()
		require.NoError(t, c.AddResource("s.json", doc))
		v, err := c.Compile("s.json")
		require.NoError(t, err)
		file := filepath.Join(t.TempDir(), "s.json")
		require.NoError(t, os.WriteFile(file, []byte(schema), 0o644))
		cut := 0
		for seed := 1; seed <= 20; seed++ {
			t.Run(fmt.Sprintf("schema%d/seed%d", i, seed), func(t *testing.T) {
				out, stderr, code := runIn(t, "", "run", "-m", model, "-p", "Once upon a time", "--max-tokens", "64",
					"--temperature", "1.5", "--seed", fmt.Sprint(seed), "--json-schema", file)
				require.Equal(t, 0, code, stderr)
				if strings.Contains(stderr, "| stop max-tokens |") {
					cut++
				}
				inst, err := jsonschema.UnmarshalJSON(strings.NewReader(out))
				require.NoError(t, err, out)
				assert.NoError(t, v.Validate(inst), out)
			})
		}
		t.Logf("schema %d: %d of 20 turns cut by the budget", i, cut)
	}
}

// TestRunJSONSchemaBudgetWarning: a --max-tokens too small for the
// schema's shortest completion and end of generation is one warning line
// on stderr, without --plugin-log; a budget that holds it none.
func TestRunJSONSchemaBudgetWarning(t *testing.T) {
	model := storiesModel(t)
	schema := `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}` // {"name":""}: 11 bytes
	want := "warning: the schema's shortest completion (11 tokens) and end of generation do not fit --max-tokens 6; the output will be cut"
	for _, n := range []string{"6", "40"} {
		_, stderr, code := runIn(t, "", "run", "-m", model, "-p", "Once upon a time", "-n", n, "--seed", "1", "--json-schema", schema)
		require.Equal(t, 0, code, stderr)
		if n == "6" {
			assert.Equal(t, 1, strings.Count(stderr, want+"\n"), stderr)
		} else {
			assert.NotContains(t, stderr, "warning:", stderr)
		}
	}
}

// TestRunJSONSchemaFormatWarning: a --json-schema format that JSON
// Schema does not define runs as the annotation it is, with one warning
// line on stderr naming it and its subschema; a defined one warns nothing.
func TestRunJSONSchemaFormatWarning(t *testing.T) {
	model := storiesModel(t)
	for _, tc := range []struct{ format, want string }{
		{"int32", `warning: --json-schema: format "int32" at #/properties/n is not enforced: JSON Schema defines no such format (an annotation)`},
		{"date", ""},
	} {
		schema := `{"type":"object","properties":{"n":{"type":"string","format":"` + tc.format + `"}},"required":["n"],"additionalProperties":false}`
		_, stderr, code := runIn(t, "", "run", "-m", model, "-p", "Once upon a time", "-n", "40", "--seed", "1", "--json-schema", schema)
		require.Equal(t, 0, code, stderr)
		if tc.want == "" {
			assert.NotContains(t, stderr, "warning:", stderr)
			continue
		}
		assert.Equal(t, 1, strings.Count(stderr, tc.want+"\n"), stderr)
	}
}

// TestGrammarCheckFormatWarning: grammar check prints a schema's format
// that JSON Schema does not define as run does, one warning line on
// stderr (the report on stdout stays clean, JSON or text): --json-schema's
// once after the flag, a MaskBench file's own schema's after the file; a
// defined format warns nothing.
func TestGrammarCheckFormatWarning(t *testing.T) {
	model := storiesModel(t)
	dir := t.TempDir()
	inst := filepath.Join(dir, "inst.json")
	require.NoError(t, os.WriteFile(inst, []byte(`{"n": "x"}`), 0o644))
	const at = ` at #/properties/n is not enforced: JSON Schema defines no such format (an annotation)`
	for _, tc := range []struct{ format, want string }{
		{"int32", `warning: --json-schema: format "int32"` + at},
		{"date", ""},
	} {
		schema := `{"type":"object","properties":{"n":{"type":"string","format":"` + tc.format + `"}},"required":["n"]}`
		mb := filepath.Join(dir, tc.format+".json")
		require.NoError(t, os.WriteFile(mb, []byte(`{"schema":`+schema+`,"tests":[{"valid":true,"data":{"n":"x"}}]}`), 0o644))
		for _, args := range [][]string{
			{"--json-schema", schema, inst, inst},
			{"--json-schema", schema, "--json", inst},
			{mb},
		} {
			out, stderr, code := runIn(t, "", append([]string{"grammar", "check", "--model", model}, args...)...)
			require.Equal(t, 0, code, stderr)
			assert.NotContains(t, out, "warning", args)
			if tc.want == "" {
				assert.NotContains(t, stderr, "warning:", args)
				continue
			}
			want := tc.want
			if args[0] == mb {
				want = `warning: ` + mb + `: format "int32"` + at
			}
			assert.Equal(t, 1, strings.Count(stderr, want+"\n"), "%v: %s", args, stderr)
		}
	}
}
