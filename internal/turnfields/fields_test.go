package turnfields

import (
	"flag"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/engine"
	"github.com/realizar-host/realizar-host/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite the README's table of turn fields from Fields")

// TestFieldsDeclaredOnce: keys, flags and GenerateConfig fields are
// unique; a key is a request field's snake_case name; every row has its
// type's parts.
func TestFieldsDeclaredOnce(t *testing.T) {
	snake := regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)
	keys, flags, configs := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, f := range Fields {
		assert.Regexp(t, snake, f.Key)
		assert.False(t, keys[f.Key], "key %s twice", f.Key)
		keys[f.Key] = true
		if f.Flag != "" {
			assert.False(t, flags[f.Flag], "flag %s twice", f.Flag)
			flags[f.Flag] = true
		}
		assert.False(t, configs[f.Config], "GenerateConfig.%s set by two rows", f.Config)
		configs[f.Config] = true
		assert.Equal(t, Bool, f.Type, "%s: a type Apply and the tests know", f.Key)
		assert.NotEmpty(t, f.Usage, f.Key)
		assert.NotNil(t, f.Set, f.Key)
		got, ok := Lookup(f.Key)
		assert.True(t, ok, f.Key)
		assert.Equal(t, f.Key, got.Key)
	}
	_, ok := Lookup("no_such_field")
	assert.False(t, ok)
}

// TestSetSetsConfig: each row's Set sets the GenerateConfig field its
// Config names, to the value given, and nothing else; Apply sets the
// value given or, without one, the default.
func TestSetSetsConfig(t *testing.T) {
	for _, f := range Fields {
		t.Run(f.Key, func(t *testing.T) {
			field, ok := reflect.TypeFor[engine.GenerateConfig]().FieldByName(f.Config)
			require.True(t, ok, "GenerateConfig has no field %s", f.Config)
			require.Equal(t, reflect.Bool, field.Type.Kind(), "GenerateConfig.%s", f.Config)
			for _, v := range []bool{!f.Default, f.Default} {
				var cfg engine.GenerateConfig
				reflect.ValueOf(&cfg).Elem().FieldByIndex(field.Index).SetBool(!v)
				f.Set(&cfg, v)
				want := engine.GenerateConfig{}
				reflect.ValueOf(&want).Elem().FieldByIndex(field.Index).SetBool(v)
				assert.Equal(t, want, cfg, "Set(%v)", v)
			}

			var cfg engine.GenerateConfig
			Apply(&cfg, func(Field) *bool { return nil })
			assert.Equal(t, f.Default, reflect.ValueOf(cfg).FieldByIndex(field.Index).Bool(), "Apply without a value")
			other := !f.Default
			Apply(&cfg, func(g Field) *bool {
				if g.Key == f.Key {
					return &other
				}
				return nil
			})
			assert.Equal(t, other, reflect.ValueOf(cfg).FieldByIndex(field.Index).Bool(), "Apply with a value")
		})
	}
}

// The README's table lies between these lines.
const (
	tableBegin = "<!-- turn fields: generated from internal/turnfields.Fields; go test ./internal/turnfields -run TestREADMETable -update -->\n"
	tableEnd   = "<!-- end of turn fields -->\n"
)

// markdownTable is Fields as the README's table.
func markdownTable() string {
	var b strings.Builder
	b.WriteString("| request field | llama.cpp flag | OpenAI | Anthropic | type | default | CLI flag | sets (`engine.GenerateConfig`) | what it does |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|\n")
	yes := func(v bool) string {
		if v {
			return "yes"
		}
		return ""
	}
	dash := func(s string) string {
		if s == "" {
			return "—"
		}
		return "`" + s + "`"
	}
	flagName := ""
	for _, f := range Fields {
		if flagName = "—"; f.Flag != "" {
			flagName = "`--" + f.Flag + "`"
		}
		def := "false"
		if f.Default {
			def = "true"
		}
		b.WriteString("| " + strings.Join([]string{"`" + f.Key + "`", dash(f.LlamaCpp), yes(f.OpenAI), yes(f.Anthropic),
			f.Type.String(), def, flagName, "`" + f.Config + "`", f.Usage}, " | ") + " |\n")
	}
	return b.String()
}

// TestREADMETable: the README's table of turn fields is markdownTable's
// (with -update, it is rewritten).
func TestREADMETable(t *testing.T) {
	testenv.Generated(t, "../../README.md", tableBegin, tableEnd, markdownTable(), *update,
		"go test ./internal/turnfields -run TestREADMETable -update")
}
