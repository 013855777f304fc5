package plugins

import (
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/realizar-host/realizar-host/internal/plugins/sampling"
)

// TestConfigFieldsMatchParams: the config types' number fields are the
// number parameters of sampling.Params their plugin reads, under the same
// keys and kinds (an integer parameter an *int).
func TestConfigFieldsMatchParams(t *testing.T) {
	numbers := func(plugin string) map[string]bool { // key -> integer
		out := map[string]bool{}
		for _, p := range sampling.Of(plugin) {
			if p.Number() {
				out[p.Key] = p.Type == sampling.Int
			}
		}
		return out
	}
	kinds := func(ns []number) map[string]bool {
		out := map[string]bool{}
		for _, n := range ns {
			out[n.key] = n.i != nil
		}
		return out
	}
	var full Standard
	for _, p := range sampling.Of(sampling.Standard) {
		full.SetNumber(p.Key, 1)
	}
	assert.Equal(t, numbers(sampling.Standard), kinds(full.numbers()))
	var d DRY
	for _, p := range sampling.Of(sampling.DRY) {
		d.SetNumber(p.Key, 1)
	}
	assert.Equal(t, numbers(sampling.DRY), kinds(d.numbers()))
	var m MirostatV2
	for _, key := range []string{"temperature", "mirostat_tau", "mirostat_eta"} {
		assert.True(t, m.setNumber(key, 1), key)
		p, ok := sampling.Lookup(key)
		assert.True(t, ok && p.Plugin == sampling.Standard, key)
	}
	assert.False(t, m.setNumber("top_k", 1))
}

// TestConfigTypesFromParams: Standard's and DRY's fields are their
// plugin's rows of sampling.Params, one field a row, named for its key
// (DRY's without the dry_ prefix) and of the Go type its sampling.Type
// gives; a row added to the table without its field, or a field of
// another type, fails here.
func TestConfigTypesFromParams(t *testing.T) {
	goType := map[sampling.Type]reflect.Type{
		sampling.Float: reflect.TypeFor[*float64](), sampling.Float32: reflect.TypeFor[*float64](),
		sampling.Int: reflect.TypeFor[*int](), sampling.Order: reflect.TypeFor[[]string](),
		sampling.Bias: reflect.TypeFor[map[int32]float64](), sampling.Strings: reflect.TypeFor[[]string](),
	}
	for _, tt := range []struct {
		plugin, prefix string
		typ            reflect.Type
	}{
		{sampling.Standard, "", reflect.TypeFor[Standard]()},
		{sampling.DRY, "dry_", reflect.TypeFor[DRY]()},
	} {
		fields := map[string]reflect.Type{}
		for f := range tt.typ.Fields() {
			fields[strings.ToLower(f.Name)] = f.Type
		}
		params := sampling.Of(tt.plugin)
		assert.Len(t, fields, len(params), "%s: a field for each row", tt.typ)
		for _, p := range params {
			name := strings.ReplaceAll(strings.TrimPrefix(p.Key, tt.prefix), "_", "")
			typ, ok := fields[name]
			if assert.True(t, ok, "%s: no field for %s", tt.typ, p.Key) {
				assert.Equal(t, goType[p.Type], typ, "%s.%s", tt.typ, p.Key)
			}
		}
	}
}

// TestDRYRuns: llama.cpp's condition for running DRY.
func TestDRYRuns(t *testing.T) {
	on := DRY{Multiplier: ptr(0.8)}
	for _, tt := range []struct {
		d        DRY
		mirostat int
		samplers []string
		want     bool
	}{
		{on, 0, nil, true},
		{on, 0, []string{"top_k", "DRY"}, true},
		{on, 0, []string{"top_k", "temp"}, false},
		{on, 1, nil, false},
		{on, 2, nil, false},
		{DRY{Multiplier: ptr(0.8), PenaltyLastN: ptr(0)}, 0, nil, false},
		{DRY{}, 0, nil, false},
	} {
		assert.Equal(t, tt.want, tt.d.Runs(tt.mirostat, tt.samplers), "%+v %d %v", tt.d, tt.mirostat, tt.samplers)
	}
	s := Standard{Temperature: ptr(0.7), TopK: ptr(3), MirostatEta: ptr(0.2)}
	assert.Equal(t, MirostatV2{Temperature: ptr(0.7), Eta: ptr(0.2)}, MirostatV2Of(s))
}

func ptr[T any](v T) *T { return &v }
