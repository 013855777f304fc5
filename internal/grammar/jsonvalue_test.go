package grammar_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/internal/grammar"
)

// TestSerializeInstanceBranchOrder: an object under anyOf or oneOf is
// serialized in the property order of the branch it can be valid against
// (told apart by const, enum, required and closed properties), which the
// schema's grammar accepts — not in the branches' orders merged (MaskBench
// MCPspec CallToolResult: an image item's "type" came before its "data").
func TestSerializeInstanceBranchOrder(t *testing.T) {
	schema := `{"type":"array","items":{"anyOf":[{"$ref":"#/$defs/text"},{"$ref":"#/$defs/image"},{"$ref":"#/$defs/closed"}]},
"$defs":{"text":{"type":"object","properties":{"text":{"type":"string"},"type":{"const":"text"}},"required":["text","type"]},
"image":{"type":"object","properties":{"data":{"type":"string"},"mime":{"enum":["png","jpeg"]},"type":{"const":"image"}},"required":["data","type"]},
"closed":{"type":"object","properties":{"z":{"type":"integer"},"a":{"type":"integer"}},"additionalProperties":false}}}`
	tests := []struct{ in, want string }{
		{`[{"type":"text","text":"hi"}]`, `[{"text":"hi","type":"text"}]`},
		{`[{"type":"image","mime":"png","data":"x"}]`, `[{"data":"x","mime":"png","type":"image"}]`},
		{`[{"a":1,"z":2}]`, `[{"z":2,"a":1}]`},
		{`[{"type":"text","text":"a"},{"type":"image","data":"b"}]`, `[{"text":"a","type":"text"},{"data":"b","type":"image"}]`},
	}
	src, err := grammar.FromJSONSchema([]byte(schema))
	require.NoError(t, err)
	g, err := grammar.Compile(src)
	require.NoError(t, err)
	v, _ := byteVocab(t)
	for _, tt := range tests {
		got, err := grammar.SerializeInstance([]byte(schema), []byte(tt.in))
		require.NoError(t, err)
		assert.Equal(t, tt.want, got)
		m := grammar.NewMatcher(g, v)
		assert.True(t, m.AcceptBytes([]byte(got)) == nil && m.Done(), "the grammar refuses %s", got)
	}
}

// TestSerializeInstancePatternProperties: a key that a patternProperties
// pattern matches has its value ordered by that pattern's schema.
func TestSerializeInstancePatternProperties(t *testing.T) {
	schema := `{"type":"object","patternProperties":{"^/":{"type":"object","properties":{"z":{},"a":{}}}},"additionalProperties":false}`
	got, err := grammar.SerializeInstance([]byte(schema), []byte(`{"/x":{"a":1,"z":2}}`))
	require.NoError(t, err)
	assert.Equal(t, `{"/x":{"z":2,"a":1}}`, got)
}
