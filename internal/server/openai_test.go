package server

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRequestFields(t *testing.T) {
	for _, tc := range []struct {
		body   string
		prompt promptField
		stop   stopField
	}{
		{`{"prompt": "hi", "stop": "x"}`, promptField{text: "hi", count: 1, isText: true}, stopField{"x"}},
		{`{"prompt": ["hi"], "stop": ["x", "y"]}`, promptField{text: "hi", count: 1, isText: true}, stopField{"x", "y"}},
		{`{"prompt": [1, 2, 3], "stop": null}`, promptField{tokens: []int32{1, 2, 3}, count: 1}, nil},
		{`{"prompt": [[1, 2], [3]]}`, promptField{tokens: []int32{1, 2}, count: 2}, nil},
		{`{"prompt": ["a", "b"]}`, promptField{text: "a", count: 2, isText: true}, nil},
	} {
		var r completionRequest
		require.NoError(t, json.Unmarshal([]byte(tc.body), &r), tc.body)
		assert.Equal(t, tc.prompt, r.Prompt, tc.body)
		assert.Equal(t, tc.stop, r.Stop, tc.body)
	}
	for _, bad := range []string{`{"prompt": {}}`, `{"stop": 3}`, `{"prompt": [1.5]}`} {
		var r completionRequest
		assert.Error(t, json.Unmarshal([]byte(bad), &r), bad)
	}
}

func FuzzCompletionRequest(f *testing.F) {
	f.Add([]byte(`{"prompt": "hi", "stop": ["a"], "max_tokens": 3, "realizar": {"sampler": {"plugin": "greedy", "config": {}}}}`))
	f.Add([]byte(`{"prompt": [[1], [2]], "logit_bias": {"1": -100}}`))
	f.Add([]byte(`{"messages": [{"role": "user", "content": [{"type": "text", "text": "x"}]}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var c completionRequest
		if json.Unmarshal(b, &c) == nil {
			assert.GreaterOrEqual(t, c.Prompt.count, 0)
		}
		var ch chatRequest
		if json.Unmarshal(b, &ch) == nil {
			for _, m := range ch.Messages {
				_, _ = messageText(m.Content)
			}
		}
	})
}
