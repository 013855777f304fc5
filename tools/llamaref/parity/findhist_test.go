package parity

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// findHistogram recognises the shapes inspect --json may reasonably use.
func TestFindHistogram(t *testing.T) {
	known := map[string]int64{"q4_k": 1, "f32": 1}
	for _, tc := range []struct {
		name, doc string
		count     map[string]int64
		bytes     map[string]int64
		found     bool
	}{
		{"counts", `{"arch":"llama","types":{"Q4_K":3,"F32":2}}`,
			map[string]int64{"q4_k": 3, "f32": 2}, nil, true},
		{"objects", `{"tensors":{"by_type":{"q4_K":{"count":3,"bytes":432},"f32":{"count":2,"bytes":8}}}}`,
			map[string]int64{"q4_k": 3, "f32": 2}, map[string]int64{"q4_k": 432, "f32": 8}, true},
		{"rows", `{"types":[{"type":"Q4_K","count":3,"bytes":432},{"type":"F32","count":2,"bytes":8}]}`,
			map[string]int64{"q4_k": 3, "f32": 2}, map[string]int64{"q4_k": 432, "f32": 8}, true},
		{"none", `{"hparams":{"n_layer":2,"n_head":4}}`, nil, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var doc any
			require.NoError(t, json.Unmarshal([]byte(tc.doc), &doc))
			count, bytes, found := findHistogram(doc, known)
			assert.Equal(t, tc.found, found)
			assert.Equal(t, tc.count, count)
			assert.Equal(t, tc.bytes, bytes)
		})
	}
}
