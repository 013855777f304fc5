package plugins_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/engine"
	"github.com/realizar-host/realizar-host/forward"
	"github.com/realizar-host/realizar-host/gguf"
	"github.com/realizar-host/realizar-host/host"
	"github.com/realizar-host/realizar-host/internal/plugins"
	"github.com/realizar-host/realizar-host/internal/testenv"
	"github.com/realizar-host/realizar-host/model"
	"github.com/realizar-host/realizar-host/tokenizer"
)

// stories opens models/stories260K.gguf, committed in the repository.
func stories(t *testing.T) (*gguf.File, *tokenizer.Tokenizer, *model.Model) {
	t.Helper()
	f, err := gguf.Open(testenv.Stories())
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	tok, err := tokenizer.FromGGUF(f)
	require.NoError(t, err)
	m, err := model.Load(f, model.Options{Threads: 1})
	require.NoError(t, err)
	return f, tok, m
}

// A JSON Schema through the grammar processor on stories260K: at every
// temperature and seed the turn ends at end of generation with JSON valid
// against the schema (checked by santhosh-tekuri/jsonschema).
func TestGrammarJSONSchemaSession(t *testing.T) {
	_, tok, m := stories(t)
	schema := `{"type":"object","properties":{"name":{"type":"string","minLength":1,"maxLength":12},` +
		`"age":{"type":"integer","minimum":0,"maximum":120},"mood":{"enum":["happy","sad",null]},` +
		`"tags":{"type":"array","items":{"type":"string","pattern":"^[a-z]{1,6}$"},"maxItems":3},` +
		`"when":{"type":"string","format":"date"}},"required":["name","age"],"additionalProperties":false}`
	var doc any
	require.NoError(t, json.Unmarshal([]byte(schema), &doc))
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	require.NoError(t, c.AddResource("s.json", doc))
	validator, err := c.Compile("s.json")
	require.NoError(t, err)

	h := newHost(t, host.NewConfig())
	grammarPlugin := load(t, h, "grammar", string(plugins.Grammar{JSONSchema: json.RawMessage(schema)}.Config()))
	prompt := tok.Encode("Once upon a time", tokenizer.EncodeOptions{AddSpecial: true})
	for _, temp := range []float64{0, 0.7, 1.0, 1.5} {
		for _, seed := range []uint64{1, 2, 3} {
			t.Run(fmt.Sprintf("t%.1f-seed%d", temp, seed), func(t *testing.T) {
				turn := grammarTurn(t, m, tok, load(t, h, "standard", fmt.Sprintf(`{"temperature":%g}`, temp)), grammarPlugin, prompt, 200, seed)
				assert.Equal(t, engine.StopEOG, turn.Stop, "%s", turn.Text)
				inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(turn.Text))
				require.NoError(t, err, "%s", turn.Text)
				assert.NoError(t, validator.Validate(inst), "%s", turn.Text)
				t.Logf("%s", turn.Text)
			})
		}
	}
}

// A GBNF grammar through the processor: every turn matches it, and a
// grammar the engine refuses is a config error at reset.
func TestGrammarGBNFSession(t *testing.T) {
	_, tok, m := stories(t)
	h := newHost(t, host.NewConfig())
	p := load(t, h, "grammar", string(plugins.Grammar{GBNF: `root ::= "Tom " ("was " | "is ") [a-z]{2,8} "."`}.Config()))
	for _, seed := range []uint64{1, 2, 3, 4} {
		turn := grammarTurn(t, m, tok, load(t, h, "standard", `{"temperature":1.2}`), p, tok.Encode("Once", tokenizer.EncodeOptions{AddSpecial: true}), 40, seed)
		assert.Regexp(t, `^Tom (was|is) [a-z]{2,8}\.$`, string(turn.Text))
	}
	refusedConfigs(t, h, tok, `{"grammar":"root ::= ("}`, `{"json_schema":{"not":{}}}`, `{}`, `{"grammar":"root ::= \"a\"","json_schema":{}}`)
	// The log names the key once, then the grammar package's position and
	// cause, without its own "grammar: " again.
	for cfg, want := range map[string]string{
		`{"grammar":"root ::= ("}`:                    "config: grammar: line 1, column 11: expecting )",
		`{"grammar":"x ::= \"a\""}`:                   "config: grammar: line 1, column 1: undefined rule: no root rule",
		`{"grammar":"root ::= \"a\"\nb ::= b \"c\""}`: `config: grammar: line 2, column 1: left recursion: rule "b"`,
		`{"json_schema":{"pattern":"("}}`:             "config: json_schema: unsupported: pattern at #: pattern \"(\" at offset 1",
	} {
		pl, err := h.Load(context.Background(), wasm(t, "grammar"), host.LoadOptions{Config: []byte(cfg)})
		require.NoError(t, err)
		smp, err := host.NewSampler(tok, load(t, h, "greedy", ""), pl)
		require.NoError(t, err)
		var pe *host.PluginError
		require.ErrorAs(t, smp.Reset(0, nil), &pe, cfg)
		assert.Contains(t, pe.LastLog, want, cfg)
		assert.LessOrEqual(t, strings.Count(pe.LastLog, "grammar: "), 1, "%s: %s", cfg, pe.LastLog)
		smp.Close()
	}
}

// A lazy grammar ("triggers"): stories260K writes freely until " was"
// appears, then the rest of the turn is the grammar's, ending at end of
// generation; a bad trigger list is a config error.
func TestGrammarTriggersSession(t *testing.T) {
	_, tok, m := stories(t)
	h := newHost(t, host.NewConfig())
	cfg := plugins.Grammar{GBNF: `root ::= " was " ("a" | "an") " " [a-z]{2,8} "."`, Triggers: []string{" was"}}
	p := load(t, h, "grammar", string(cfg.Config()))
	for _, temp := range []float64{0, 0.8} {
		for _, seed := range []uint64{1, 2} {
			turn := grammarTurn(t, m, tok, load(t, h, "standard", fmt.Sprintf(`{"temperature":%g}`, temp)), p,
				tok.Encode("Once upon a time", tokenizer.EncodeOptions{AddSpecial: true}), 60, seed)
			text := string(turn.Text)
			t.Logf("t%.1f seed %d: %q", temp, seed, text)
			before, after, found := strings.Cut(text, " was")
			if temp == 0 {
				require.True(t, found, "greedy writes \" was\" early: %q", text)
			}
			if found {
				assert.NotContains(t, before, " was")
				assert.Regexp(t, `^ (a|an) [a-z]{2,8}\.$`, after)
				assert.Equal(t, engine.StopEOG, turn.Stop)
			}
		}
	}
	refusedConfigs(t, h, tok, `{"grammar":"root ::= \"a\"","triggers":[""]}`, `{"grammar":"root ::= \"a\"","triggers":[]}`)
}

// grammarTurn runs one turn on m: sampler (a loaded plugin) after the
// grammar processor p, from prompt, under maxTokens and seed.
func grammarTurn(t *testing.T, m *model.Model, tok *tokenizer.Tokenizer, sampler, p *host.Plugin, prompt []int32, maxTokens int, seed uint64) engine.Turn {
	t.Helper()
	fwd, err := forward.NewSequenceForward(m.NewSequence(), forward.Options{Arch: m.Config().Arch, ModelContext: m.Config().ContextLength})
	require.NoError(t, err)
	smp, err := host.NewSampler(tok, sampler, p)
	require.NoError(t, err)
	sess, err := engine.NewSession(fwd, tok, engine.WithSampler(smp))
	require.NoError(t, err)
	defer sess.Close()
	turn, err := sess.Generate(prompt, engine.GenerateConfig{MaxTokens: maxTokens, Seed: &seed})
	require.NoError(t, err)
	return turn
}

// refusedConfigs checks that each config in bad is a config error at reset.
func refusedConfigs(t *testing.T, h *host.Host, tok *tokenizer.Tokenizer, bad ...string) {
	t.Helper()
	for _, b := range bad {
		pl, err := h.Load(context.Background(), wasm(t, "grammar"), host.LoadOptions{Config: []byte(b)})
		require.NoError(t, err)
		smp, err := host.NewSampler(tok, load(t, h, "greedy", ""), pl)
		require.NoError(t, err)
		assert.ErrorIs(t, smp.Reset(0, nil), host.ErrBadConfig, b)
		smp.Close()
	}
}
