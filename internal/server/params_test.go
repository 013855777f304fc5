package server

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/internal/plugins/sampling"
)

// TestRequestFieldsMatchParams: every sampling parameter is a request
// field under its key, of the Go type its sampling.Type decodes to.
func TestRequestFieldsMatchParams(t *testing.T) {
	want := map[sampling.Type]reflect.Type{
		sampling.Float: reflect.TypeFor[*float64](), sampling.Float32: reflect.TypeFor[*float64](),
		sampling.Int: reflect.TypeFor[*int](), sampling.Order: reflect.TypeFor[json.RawMessage](),
		sampling.Bias: reflect.TypeFor[map[string]float64](), sampling.Strings: reflect.TypeFor[[]string](),
		sampling.Seed: reflect.TypeFor[*int64](),
	}
	var f samplingFields
	for _, p := range sampling.Params {
		v := f.paramField(p.Key)
		require.True(t, v.IsValid(), "%s: no request field", p.Key)
		assert.Equal(t, want[p.Type], v.Type(), p.Key)
		if p.Type != sampling.Order { // a raw value takes any JSON
			var req completionRequest
			err := decodeBody([]byte(`{"prompt": "hi", "`+p.Key+`": true}`), &req)
			var apiErr *APIError
			require.ErrorAs(t, err, &apiErr, p.Key)
			assert.Equal(t, p.Key, apiErr.Param, "a wrong JSON type names the field")
		}
	}
}

// inRange is a value of p's range other than its server default (and
// other than 0 for a DRY parameter, whose 0 turns DRY off), to show the
// request's value reaches the plugin.
func inRange(p sampling.Param) float64 {
	for _, v := range []float64{0.25, 0.5, 3, 1, 2} {
		if p.Type == sampling.Int && v != math.Trunc(v) {
			continue
		}
		if p.Range.Contains(v) && v != p.ServerDefault() {
			return v
		}
	}
	panic("no value in the range of " + p.Key)
}

// TestEveryFieldHasAnEffect: each number parameter of sampling.Params a
// request sets is in its plugin's config with the value given, and the
// other types too; nothing documented is dropped on the way.
func TestEveryFieldHasAnEffect(t *testing.T) {
	const nVocab = 100
	for _, p := range sampling.Params {
		t.Run(p.Key, func(t *testing.T) {
			body := map[string]any{}
			var want any
			switch p.Type {
			case sampling.Float, sampling.Float32, sampling.Int:
				v := inRange(p)
				body[p.Key], want = v, v
			case sampling.Order:
				body[p.Key], want = "top_k;dry;temperature", []any{"top_k", "dry", "temperature"}
			case sampling.Bias:
				body[p.Key], want = map[string]float64{"7": 2.5}, map[string]any{"7": 2.5}
			case sampling.Strings:
				body[p.Key], want = []string{"\n\n"}, []any{"\n\n"}
			case sampling.Seed:
				body[p.Key] = -2
			}
			if p.Plugin == sampling.DRY && p.Key != "dry_multiplier" {
				body["dry_multiplier"] = 0.8
			}
			raw, err := json.Marshal(body)
			require.NoError(t, err)
			var f samplingFields
			require.NoError(t, json.Unmarshal(raw, &f))
			require.True(t, f.has(p.Key))
			var cfg json.RawMessage
			switch p.Plugin {
			case sampling.Standard:
				assert.True(t, hasSamplingFields(&f))
				cfg, err = standardConfig(&f, nVocab)
			case sampling.DRY:
				assert.False(t, hasSamplingFields(&f), "DRY goes with any sampler")
				cfg, err = dryConfig(&f, 0)
			case sampling.Host:
				assert.False(t, hasSamplingFields(&f), "a seed goes with any sampler")
				assert.Equal(t, uint64(math.MaxUint64-1), drawSeed(&f), "the turn's seed: -2's bits")
				return
			default:
				t.Fatalf("plugin %q", p.Plugin)
			}
			require.NoError(t, err)
			var got map[string]any
			require.NoError(t, json.Unmarshal(cfg, &got))
			assert.Equal(t, want, got[p.Key], "%s", cfg)
		})
	}
}

// TestServerDefaults: a request without sampling fields configures the
// standard sampler with the table's server defaults where they differ from
// the sampler's, and nothing else.
func TestServerDefaults(t *testing.T) {
	cfg, err := standardConfig(&samplingFields{}, 100)
	require.NoError(t, err)
	var got map[string]float64
	require.NoError(t, json.Unmarshal(cfg, &got))
	want := map[string]float64{}
	for _, p := range sampling.Params {
		if p.Server != nil {
			want[p.Key] = *p.Server
		}
	}
	assert.Equal(t, map[string]float64{"temperature": 1, "top_p": 1, "top_k": 0, "min_p": 0}, want, "OpenAI's defaults")
	assert.Equal(t, want, got)
}

// TestOutOfRangeFields: a value below each number parameter's range is a
// 400 naming the field, through the server (typical_p and repeat_last_n
// were once accepted and dropped).
func TestOutOfRangeFields(t *testing.T) {
	s := startServer(t, testTenantsFile(), 8)
	for _, p := range sampling.Params {
		if !p.Number() {
			continue
		}
		bad := p.Range.Min - 2
		if p.Type != sampling.Int {
			bad = p.Range.Min - 0.5
		}
		if p.Key == "mirostat" {
			bad = 3 // 2 is the mirostat-v2 sampler
		}
		t.Run(p.Key, func(t *testing.T) {
			extra := ""
			if p.Plugin == sampling.DRY && p.Key != "dry_multiplier" {
				extra = `, "dry_multiplier": 1`
			}
			body := fmt.Sprintf(`{"prompt": "hi", "max_tokens": 1, %q: %v%s}`, p.Key, bad, extra)
			code, b := s.do(t, "POST", "/v1/completions", keyA, []byte(body))
			require.Equal(t, http.StatusBadRequest, code, string(b))
			assert.Equal(t, p.Key, errorOf(t, b).Param, string(b))
		})
	}
}

// TestTypicalPAndRepeatLastN: the two fields the server once dropped
// change the text. typical_p near 0 leaves one candidate a step, so two
// seeds at temperature 5 give one text (and without it two); at
// temperature 0 a strong repeat_penalty changes the greedy text, and
// repeat_last_n 0 turns it off again.
func TestTypicalPAndRepeatLastN(t *testing.T) {
	s := startServer(t, nil, 8)
	complete := func(fields string) string {
		body := `{"prompt": "Once upon a time", "max_tokens": 24, ` + fields + `}`
		code, b := s.do(t, "POST", "/v1/completions", "", []byte(body))
		require.Equal(t, http.StatusOK, code, string(b))
		var r struct {
			Choices []struct{ Text string } `json:"choices"`
		}
		require.NoError(t, json.Unmarshal(b, &r))
		require.Len(t, r.Choices, 1)
		return r.Choices[0].Text
	}
	assert.Equal(t, complete(`"temperature": 5, "top_k": 40, "typical_p": 1e-9, "seed": 1`), complete(`"temperature": 5, "top_k": 40, "typical_p": 1e-9, "seed": 2`))
	assert.NotEqual(t, complete(`"temperature": 5, "top_k": 40, "seed": 1`), complete(`"temperature": 5, "top_k": 40, "seed": 2`))

	greedy := complete(`"temperature": 0`)
	assert.NotEqual(t, greedy, complete(`"temperature": 0, "repeat_penalty": 0.2`))
	assert.Equal(t, greedy, complete(`"temperature": 0, "repeat_penalty": 0.2, "repeat_last_n": 0`))
}
