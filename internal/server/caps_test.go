package server

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRequestCaps: what one request may make the server build is capped,
// each cap a 400 naming the request field, answered fast (before any
// plugin is instantiated or any text tokenized). The fixture's context is
// 256 positions, so prompts are capped at 4096 bytes.
func TestRequestCaps(t *testing.T) {
	s := startServer(t, testTenantsFile(), 8)
	processors := func(n int) string {
		refs := make([]string, n)
		for i := range refs {
			refs[i] = `{"plugin": "dry"}`
		}
		return `{"prompt": "hi", "realizar": {"processors": [` + strings.Join(refs, ",") + `]}}`
	}
	logitBias := func(n int) string {
		kv := make([]string, n)
		for i := range kv {
			kv[i] = fmt.Sprintf(`"%d": 1`, i)
		}
		return `{"prompt": "hi", "logit_bias": {` + strings.Join(kv, ",") + `}}`
	}
	long := strings.Repeat("a", 4097)
	for _, tc := range []struct {
		name, path, body, param string
	}{
		{"17 processors", "/v1/completions", processors(17), "realizar.processors"},
		{"10000 processors", "/v1/completions", processors(10000), "realizar.processors"},
		{"long stop string", "/v1/completions", `{"prompt": "hi", "stop": ["` + strings.Repeat("x", 1025) + `"]}`, "stop"},
		{"1025 logit_bias entries", "/v1/completions", logitBias(1025), "logit_bias"},
		{"prompt bytes", "/v1/completions", `{"prompt": "` + long + `"}`, "prompt"},
		{"megabytes of prompt", "/v1/completions", `{"prompt": "` + strings.Repeat("word ", 1500000) + `"}`, "prompt"},
		{"message bytes", "/v1/chat/completions", `{"messages": [{"role": "user", "content": "` + long[:3000] + `"}, {"role": "user", "content": "` + long[:1100] + `"}]}`, "messages"},
		{"temperature of the wrong type", "/v1/completions", `{"prompt": "hi", "temperature": "hot"}`, "temperature"},
		{"max_tokens of the wrong type", "/v1/chat/completions", `{"messages": [], "max_tokens": "many"}`, "max_tokens"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			code, b := s.do(t, "POST", tc.path, keyA, []byte(tc.body))
			elapsed := time.Since(start)
			require.Equal(t, http.StatusBadRequest, code, string(b))
			e := errorOf(t, b)
			assert.Equal(t, tc.param, e.Param)
			assert.Contains(t, e.Message, tc.param)
			assert.Less(t, elapsed, raceSlowdown*2*time.Second) // decoding 7.5 MB of JSON, slower under -race
		})
	}
	// At the caps, requests are served.
	for _, body := range []string{processors(16), logitBias(1024),
		`{"prompt": "hi", "max_tokens": 1, "stop": ["` + strings.Repeat("x", 1024) + `"]}`} {
		code, b := s.do(t, "POST", "/v1/completions", keyA, []byte(body))
		require.Equal(t, http.StatusOK, code, string(b))
	}
}
