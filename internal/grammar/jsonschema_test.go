package grammar_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/internal/grammar"
)

func TestFromJSONSchemaMatches(t *testing.T) {
	tests := []struct {
		name, schema string
		accept       []string
		reject       []string
	}{
		{"object", `{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"string"}},"required":["a"],"additionalProperties":false}`,
			[]string{`{"a":1}`, `{"a":-20,"b":"x"}`}, []string{`{}`, `{"b":"x"}`, `{"a":1,"c":2}`, `{"a":"1"}`, `{"b":"x","a":1}`, `{"a":1.5}`}},
		{"additional default", `{"type":"object","properties":{"a":{"type":"integer"}}}`,
			[]string{`{}`, `{"a":1}`, `{"a":1,"ab":"x"}`, `{"b":[1,{"c":null}]}`, `{"":1}`}, []string{`{"a":"x"}`, `{"a":1,"a":"x"}`}},
		{"additional schema", `{"type":"object","additionalProperties":{"type":"boolean"}}`,
			[]string{`{"x":true,"y":false}`}, []string{`{"x":1}`}},
		{"record (zod)", `{"type":"object","propertyNames":{"type":"string"},"additionalProperties":{"type":"number"}}`,
			[]string{`{}`, `{"a":1,"b":0.5}`}, []string{`{"a":"x"}`}},
		{"patternProperties, closed", `{"type":"object","properties":{"id":{"type":"integer"}},"patternProperties":{"^x_[a-z]+$":{"type":"integer"},"^y":{"type":"string"},"^z":false},"additionalProperties":false}`,
			[]string{`{}`, `{"id":1,"x_ab":2,"yz":"s"}`, `{"y":"","x_q":0}`}, []string{`{"x_ab":"s"}`, `{"w":1}`, `{"x_":1}`, `{"z":1}`, `{"id":"1"}`}},
		{"maxProperties, all named required", `{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"],"maxProperties":3,"additionalProperties":{"type":"string"}}`,
			[]string{`{"a":1}`, `{"a":1,"b":"x","c":"y"}`}, []string{`{"a":1,"b":"x","c":"y","d":"z"}`, `{}`}},
		{"maxProperties, extras only", `{"type":"object","maxProperties":2,"additionalProperties":{"type":"integer"}}`,
			[]string{`{}`, `{"x":1}`, `{"x":1,"y":2}`}, []string{`{"x":1,"y":2,"z":3}`}},
		{"maxProperties, optional named, no extras", `{"type":"object","properties":{"a":{},"b":{}},"maxProperties":2,"additionalProperties":false}`,
			[]string{`{}`, `{"a":1,"b":2}`}, []string{`{"c":1}`}},
		{"minProperties one past the required", `{"type":"object","minProperties":1,"maxProperties":2,"additionalProperties":{"type":"string"}}`,
			[]string{`{"x":""}`, `{"x":"","y":""}`}, []string{`{}`, `{"x":"","y":"","z":""}`}},
		{"minProperties, required and extras", `{"type":"object","properties":{"a":{}},"required":["a"],"minProperties":2}`,
			[]string{`{"a":1,"b":2}`}, []string{`{"a":1}`}},
		{"oneOf of required keys", `{"type":"object","properties":{"a":{},"b":{},"c":{}},"oneOf":[{"required":["a"]},{"required":["b"]}]}`,
			[]string{`{"a":1}`, `{"b":1,"c":2}`, `{"b":1,"z":2}`}, []string{`{}`, `{"a":1,"b":2}`, `{"c":1}`}},
		{"oneOf of required keys, untyped", `{"properties":{"a":{},"b":{}},"oneOf":[{"required":["a"]},{"required":["b"]}]}`,
			[]string{`{"a":1}`, `{"b":null}`}, []string{`1`, `"a"`, `{"a":1,"b":1}`, `{}`}},
		{"oneOf of required keys, one covering another", `{"properties":{"a":{},"b":{}},"oneOf":[{"required":["a"]},{"required":["a","b"]}]}`,
			[]string{`{"a":1}`}, []string{`{"a":1,"b":2}`, `{"b":2}`}},
		{"oneOf of closed objects, untyped", `{"oneOf":[{"properties":{"a":{}},"required":["a"],"additionalProperties":false},{"properties":{"b":{}},"required":["b"],"additionalProperties":false},{"type":"string"}]}`,
			[]string{`{"a":1}`, `{"b":1}`}, []string{`1`, `"x"`, `{"a":1,"b":2}`, `{}`}},
		{"oneOf of closed objects", `{"type":"object","oneOf":[{"properties":{"t":{},"d":{}},"required":["t","d"],"additionalProperties":false},{"properties":{"t":{},"l":{}},"required":["t","l"],"additionalProperties":false}]}`,
			[]string{`{"t":1,"d":2}`, `{"t":1,"l":2}`}, []string{`{"t":1}`, `{"t":1,"d":1,"l":2}`}},
		{"not not", `{"not":{"not":{"type":"integer","minimum":2}}}`, []string{`2`, `30`}, []string{`1`, `"x"`, `2.5`}},
		{"not of types", `{"not":{"type":["boolean","number"]}}`, []string{`"x"`, `null`, `{}`, `[1]`}, []string{`true`, `1`, `1.5`}},
		{"not both keys", `{"type":"object","properties":{"body":{},"bodyValue":{},"id":{}},"not":{"required":["body","bodyValue"]}}`,
			[]string{`{}`, `{"body":1}`, `{"bodyValue":1,"id":2}`}, []string{`{"body":1,"bodyValue":2}`, `1`}},
		{"enum beside properties", `{"enum":[{"a":1},{"a":"x"},{"b":2},{"z":0,"a":2}],"properties":{"a":{"type":"integer"},"z":{}},"required":["a"]}`,
			[]string{`{"a":1}`, `{"a":2,"z":0}`}, []string{`{"a":"x"}`, `{"b":2}`, `{"z":0,"a":2}`}},
		{"enum beside maxProperties and a pattern", `{"enum":[{"a":1},{"a":1,"b":2},"ab","b"],"maxProperties":1,"pattern":"^a"}`,
			[]string{`{"a":1}`, `"ab"`}, []string{`{"a":1,"b":2}`, `"b"`}},
		{"required key not among the properties", `{"type":"object","properties":{"a":{}},"required":["x"],"additionalProperties":{"type":"integer"}}`,
			[]string{`{"x":1}`, `{"a":"s","x":1,"y":2}`}, []string{`{}`, `{"x":"s"}`, `{"y":1}`, `{"x":1,"x":2}`}},
		{"enum under oneOf, a branch left empty", `{"allOf":[{"enum":[{"baz":3,"foo":1}]},{"type":"object","oneOf":[{"required":["foo","bar"]},{"required":["foo","baz"]}]}]}`,
			[]string{`{"foo":1,"baz":3}`}, []string{`{"baz":3,"foo":1}`, `{"foo":1}`}},
		{"record with a key pattern (zod)", `{"type":"object","properties":{"Z":{}},"propertyNames":{"type":"string","pattern":"^[a-z]+$","maxLength":3},"additionalProperties":{"type":"integer"}}`,
			[]string{`{}`, `{"ab":1,"xyz":2}`}, []string{`{"abcd":1}`, `{"A":1}`, `{"ab":"x"}`, `{"Z":1}`, `{"":1}`}},
		{"multipleOf 0.01", `{"type":"number","multipleOf":0.01}`, []string{`1`, `-2.5`, `0.01`, `12.34`}, []string{`0.001`, `1.234`, `1e2`}},
		{"multipleOf 1 on a number", `{"type":"number","multipleOf":1,"minimum":2}`, []string{`2`, `30`}, []string{`1`, `2.5`}},
		{"multipleOf 1 on an integer, untyped other values", `{"multipleOf":1,"maximum":3}`, []string{`3`, `-1`, `"x"`}, []string{`4`, `1.5`}},
		{"dependencies", `{"type":"object","properties":{"vendor":{},"model":{},"x":{"type":"integer"}},"dependencies":{"vendor":["model"],"x":{"properties":{"model":{"type":"string"}}}}}`,
			[]string{`{}`, `{"model":1}`, `{"vendor":1,"model":2}`, `{"model":"m","x":1}`, `{"x":1}`}, []string{`{"vendor":1}`, `{"vendor":1,"model":2,"x":1}`}},
		{"enum", `{"enum":["red","green",3,null]}`, []string{`"red"`, `3`, `null`}, []string{`"blue"`, `4`}},
		{"const", `{"const":{"k":[1,2]}}`, []string{`{"k":[1,2]}`}, []string{`{"k":[1]}`}},
		{"anyOf", `{"anyOf":[{"type":"string"},{"type":"integer","minimum":3}]}`, []string{`"x"`, `3`, `100`}, []string{`2`, `null`}},
		{"oneOf disjoint", `{"oneOf":[{"type":"string"},{"type":"null"}]}`, []string{`"x"`, `null`}, []string{`1`}},
		{"allOf", `{"allOf":[{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]},{"properties":{"b":{"type":"integer"}},"required":["b"]}]}`,
			[]string{`{"a":"x","b":1}`}, []string{`{"a":"x"}`, `{"b":1}`}},
		{"ref", `{"$defs":{"n":{"type":"object","properties":{"v":{"type":"integer"},"next":{"$ref":"#/$defs/n"}},"required":["v"],"additionalProperties":false}},"$ref":"#/$defs/n"}`,
			[]string{`{"v":1}`, `{"v":1,"next":{"v":2,"next":{"v":3}}}`}, []string{`{"v":1,"next":{}}`}},
		{"array", `{"type":"array","items":{"type":"integer"},"minItems":2,"maxItems":3}`,
			[]string{`[1,2]`, `[1,2,3]`}, []string{`[]`, `[1]`, `[1,2,3,4]`, `[1,"2"]`}},
		{"prefixItems", `{"type":"array","prefixItems":[{"type":"string"},{"type":"integer"}],"items":false}`,
			[]string{`[]`, `["a"]`, `["a",1]`}, []string{`["a",1,2]`, `[1]`}},
		{"string length", `{"type":"string","minLength":2,"maxLength":3}`, []string{`"ab"`, `"abc"`, `"é\n"`}, []string{`"a"`, `"abcd"`}},
		{"pattern", `{"type":"string","pattern":"^[a-z]+-\\d{2}$"}`, []string{`"ab-12"`}, []string{`"ab-1"`, `"AB-12"`, `"ab-123"`}},
		{"pattern unanchored", `{"type":"string","pattern":"x+"}`, []string{`"x"`, `"axb"`}, []string{`"ab"`}},
		{"pattern alternatives anchored apart", `{"type":"string","pattern":"^ab|cd$|x"}`, []string{`"abz"`, `"zcd"`, `"zxz"`, `"ab"`}, []string{`"zab"`, `"cdz"`, `"z"`}},
		{"pattern escapes", `{"type":"string","pattern":"^[\"\\\\]+$"}`, []string{`"\"\\"`}, []string{`"a"`}},
		{"date", `{"type":"string","format":"date"}`, []string{`"2024-02-29"`, `"2023-12-31"`}, []string{`"2023-02-29"`, `"2023-04-31"`, `"2023-13-01"`, `"1900-02-29"`}},
		{"date-time", `{"type":"string","format":"date-time"}`, []string{`"2024-01-02T03:04:05Z"`, `"2024-01-02T03:04:05.123+05:30"`}, []string{`"2024-01-02 03:04:05Z"`, `"2024-01-02T24:00:00Z"`}},
		{"uuid", `{"type":"string","format":"uuid"}`, []string{`"123e4567-e89b-12d3-a456-426614174000"`}, []string{`"123e4567e89b12d3a456426614174000"`}},
		{"email", `{"type":"string","format":"email"}`, []string{`"a.b@example.com"`}, []string{`"a..b@example.com"`, `"ab@"`, `"@x.com"`}},
		{"ipv6", `{"type":"string","format":"ipv6"}`, []string{`"::"`, `"::1"`, `"2001:db8::8a2e:370:7334"`, `"2001:0db8:85a3:0000:0000:8a2e:0370:7334"`, `"::ffff:192.0.2.128"`, `"fe80::"`, `"1:2:3:4:5:6:7::"`},
			[]string{`":"`, `"1::2::3"`, `"12345::"`, `"1:2:3:4:5:6:7:8:9"`, `"::ffff:192.0.2.256"`, `"g::"`, `"1:2:3:4:5:6:7"`}},
		{"duration", `{"type":"string","format":"duration"}`, []string{`"P1D"`, `"PT1H30M"`, `"P1Y2M3DT4H5M6S"`, `"P2W"`, `"PT0S"`, `"P1M"`}, []string{`"P"`, `"PT"`, `"P1H"`, `"1D"`, `"P1D2Y"`, `"P1W1D"`, `"PT1D"`}},
		{"int range", `{"type":"integer","minimum":-15,"maximum":130}`, []string{`-15`, `-9`, `0`, `7`, `99`, `130`}, []string{`-16`, `131`, `200`, `-0`, `007`}},
		{"int exclusive", `{"type":"integer","exclusiveMinimum":0,"exclusiveMaximum":10}`, []string{`1`, `9`}, []string{`0`, `10`}},
		{"int min only", `{"type":"integer","minimum":1000}`, []string{`1000`, `99999`}, []string{`999`, `-1000`}},
		{"nullable", `{"type":["string","null"]}`, []string{`"x"`, `null`}, []string{`1`}},
		{"untyped applies per type", `{"minLength":2}`, []string{`"ab"`, `1`, `null`, `[]`}, []string{`"a"`}},
	}
	v, _ := byteVocab(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src, err := grammar.FromJSONSchema([]byte(tt.schema))
			require.NoError(t, err)
			g, err := grammar.Compile(src)
			require.NoError(t, err, src)
			m := grammar.NewMatcher(g, v)
			for _, in := range tt.accept {
				m.Reset()
				assert.True(t, m.AcceptBytes([]byte(in)) == nil && m.Done(), "should accept %s", in)
			}
			for _, in := range tt.reject {
				m.Reset()
				assert.False(t, m.AcceptBytes([]byte(in)) == nil && m.Done(), "should reject %s", in)
			}
		})
	}
}

func TestFromJSONSchemaRefuses(t *testing.T) {
	bigEnum := `{"enum":[`
	for i := range grammar.MaxEnumValues + 1 {
		if i > 0 {
			bigEnum += ","
		}
		bigEnum += `"v` + string(rune('a'+i%26)) + `"`
	}
	bigEnum += `]}`
	deep := ""
	for range 200 {
		deep += `{"type":"array","items":`
	}
	deep += `{}`
	for range 200 {
		deep += `}`
	}
	tests := []struct {
		name, schema, keyword string
		err                   error
	}{
		{"not", `{"not":{"minLength":2}}`, "not", grammar.ErrUnsupported},
		{"not of integer", `{"not":{"type":"integer"}}`, "not", grammar.ErrUnsupported},
		{"not of nothing", `{"not":{}}`, "not", grammar.ErrUnsupported},
		{"uniqueItems", `{"type":"array","uniqueItems":true}`, "uniqueItems", grammar.ErrUnsupported},
		{"patternProperties overlapping", `{"patternProperties":{"^a":{},"b$":{}},"additionalProperties":false}`, "patternProperties", grammar.ErrUnsupported},
		{"patternProperties matching a property", `{"properties":{"ab":{}},"patternProperties":{"^a":{}},"additionalProperties":false}`, "patternProperties", grammar.ErrUnsupported},
		{"maxProperties beside optional properties", `{"type":"object","properties":{"a":{}},"maxProperties":1}`, "maxProperties", grammar.ErrUnsupported},
		{"maxProperties under minProperties", `{"type":"object","minProperties":2,"maxProperties":1}`, "maxProperties", grammar.ErrUnsupported},
		{"minProperties two past the required", `{"type":"object","minProperties":2}`, "minProperties", grammar.ErrUnsupported},
		{"minProperties beside optional properties", `{"type":"object","properties":{"a":{}},"minProperties":1}`, "minProperties", grammar.ErrUnsupported},
		{"required key that additionalProperties forbids", `{"type":"object","required":["x"],"additionalProperties":false}`, "required", grammar.ErrUnsupported},
		{"multipleOf 3", `{"type":"integer","multipleOf":3}`, "multipleOf", grammar.ErrUnsupported},
		{"multipleOf 0.01 with bounds", `{"type":"number","multipleOf":0.01,"maximum":5}`, "multipleOf", grammar.ErrUnsupported},
		{"propertyNames with an enum", `{"type":"object","propertyNames":{"enum":["a"]}}`, "propertyNames", grammar.ErrUnsupported},
		{"propertyNames allowing a named property", `{"type":"object","properties":{"ab":{}},"propertyNames":{"pattern":"^a"}}`, "propertyNames", grammar.ErrUnsupported},
		{"propertyNames refusing a required property", `{"type":"object","properties":{"b":{}},"required":["b"],"propertyNames":{"pattern":"^a"}}`, "propertyNames", grammar.ErrUnsupported},
		{"propertyNames of another type", `{"type":"object","propertyNames":{"type":"integer"}}`, "propertyNames", grammar.ErrUnsupported},
		{"patternProperties", `{"patternProperties":{"^x":{}}}`, "patternProperties", grammar.ErrUnsupported},
		{"oneOf overlapping", `{"oneOf":[{"type":"string"},{"type":"string","minLength":2}]}`, "oneOf", grammar.ErrUnsupported},
		{"unenforced format", `{"type":"string","format":"iri"}`, "format", grammar.ErrUnsupported},
		{"format not a string", `{"type":"string","format":5}`, "format", grammar.ErrSchema},
		{"format not a string on an integer", `{"type":"integer","format":true}`, "format", grammar.ErrSchema},
		{"number bound with 41 fraction digits", `{"type":"number","maximum":1.00000000000000000000000000000000000000001}`, "maximum", grammar.ErrUnsupported},
		{"no number in range", `{"type":"number","minimum":1.5,"exclusiveMaximum":1.5}`, "minimum", grammar.ErrUnsupported},
		{"ref cycle", `{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"}`, "$ref", grammar.ErrUnsupported},
		{"remote ref", `{"$ref":"http://example.com/s.json"}`, "$ref", grammar.ErrUnsupported},
		{"huge enum", bigEnum, "enum", grammar.ErrTooLarge},
		{"deep", deep, "schema", grammar.ErrTooLarge},
		{"huge maxLength", `{"type":"string","maxLength":5000000}`, "maxLength", grammar.ErrTooLarge},
		{"lookahead", `{"type":"string","pattern":"^(?=a)"}`, "pattern", grammar.ErrUnsupported},
		{"backreference", `{"type":"string","pattern":"(a)\\1"}`, "pattern", grammar.ErrUnsupported},
		{"malformed", `{"type":`, "schema", grammar.ErrSchema},
		{"bad type", `{"type":"strung"}`, "type", grammar.ErrSchema},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := grammar.FromJSONSchema([]byte(tt.schema))
			require.ErrorIs(t, err, tt.err)
			var se *grammar.SchemaError
			require.True(t, errors.As(err, &se), "%v", err)
			assert.Equal(t, tt.keyword, se.Keyword, err.Error())
		})
	}
}

// TestFromJSONSchemaWarnings: a format JSON Schema does not define is
// accepted as the annotation validators read it — the grammar is the
// schema's without it — and reported once per subschema, with its JSON
// pointer, wherever it stands (a string, another type, a schema of no
// type, propertyNames); a format JSON Schema defines is no warning, and
// one on a type it does not constrain is vacuous.
func TestFromJSONSchemaWarnings(t *testing.T) {
	for _, tt := range []struct {
		name, schema, without string
		want                  []grammar.Warning
	}{
		{"string", `{"type":"string","format":"url","maxLength":8}`, `{"type":"string","maxLength":8}`,
			[]grammar.Warning{{Path: "#", Keyword: "format", Value: "url"}}},
		{"integer", `{"type":"object","properties":{"n":{"type":"integer","format":"int32"}}}`, `{"type":"object","properties":{"n":{"type":"integer"}}}`,
			[]grammar.Warning{{Path: "#/properties/n", Keyword: "format", Value: "int32"}}},
		{"no type", `{"format":"textarea"}`, `{}`,
			[]grammar.Warning{{Path: "#", Keyword: "format", Value: "textarea"}}},
		{"types", `{"type":["string","number"],"format":"double"}`, `{"type":["string","number"]}`,
			[]grammar.Warning{{Path: "#", Keyword: "format", Value: "double"}}},
		{"a $ref used twice", `{"$defs":{"p":{"type":"string","format":"path"}},"type":"array","prefixItems":[{"$ref":"#/$defs/p"},{"$ref":"#/$defs/p"}]}`,
			`{"$defs":{"p":{"type":"string"}},"type":"array","prefixItems":[{"$ref":"#/$defs/p"},{"$ref":"#/$defs/p"}]}`,
			[]grammar.Warning{{Path: "#/$defs/p", Keyword: "format", Value: "path"}}},
		{"propertyNames", `{"type":"object","propertyNames":{"format":"slug","maxLength":4}}`, `{"type":"object","propertyNames":{"maxLength":4}}`,
			[]grammar.Warning{{Path: "#/propertyNames", Keyword: "format", Value: "slug"}}},
		{"a defined format", `{"type":"string","format":"date"}`, "", nil},
		{"a defined format on an integer", `{"type":"integer","format":"date"}`, `{"type":"integer"}`, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src, ws, err := grammar.FromJSONSchemaWarnings([]byte(tt.schema))
			require.NoError(t, err)
			assert.Equal(t, tt.want, ws)
			for _, w := range ws {
				assert.Equal(t, fmt.Sprintf("format %q at %s is not enforced: JSON Schema defines no such format (an annotation)", w.Value, w.Path), w.String())
			}
			plain, err := grammar.FromJSONSchema([]byte(tt.schema))
			require.NoError(t, err)
			assert.Equal(t, src, plain, "FromJSONSchema writes the same grammar")
			if tt.without != "" {
				want, _, err := grammar.FromJSONSchemaWarnings([]byte(tt.without))
				require.NoError(t, err)
				assert.Equal(t, want, src, "the grammar of the schema without the format")
			}
		})
	}
}

// TestCatastrophicPattern: a pattern that makes backtracking engines
// explode compiles to a grammar whose matching stays linear.
func TestCatastrophicPattern(t *testing.T) {
	src, err := grammar.FromJSONSchema([]byte(`{"type":"string","pattern":"^(a+)+$"}`))
	require.NoError(t, err)
	g, err := grammar.Compile(src)
	require.NoError(t, err)
	v, _ := byteVocab(t)
	m := grammar.NewMatcher(g, v)
	in := `"` + repeat("a", 5000) + `!"`
	assert.Error(t, m.AcceptBytes([]byte(in)))
}

// TestManyRequiredProperties: matching "required" against "properties"
// stays linear. 80,000 properties, all required (1.4 MB), are refused as
// too large within seconds; matched by a scan per name it took 31 s.
func TestManyRequiredProperties(t *testing.T) {
	const n = 80000
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"%x":{}`, i)
	}
	b.WriteString(`},"required":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"%x"`, i)
	}
	b.WriteString(`]}`)
	start := time.Now()
	_, err := grammar.FromJSONSchema([]byte(b.String()))
	took := time.Since(start)
	require.ErrorIs(t, err, grammar.ErrTooLarge)
	t.Logf("%d required properties (%d KB) refused in %v", n, b.Len()>>10, took)
	assert.Less(t, took, 10*time.Second)
}
