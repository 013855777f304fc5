package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPluginCheckLanguages: the policies written in Rust and AssemblyScript
// pass plugin check with their configs, and a bad config fails it (exit
// status of a bad plugin, the guest's log line quoted).
func TestPluginCheckLanguages(t *testing.T) {
	tests := []struct {
		file, config, want string
	}{
		{"min-p", `{"min_p":0.1,"temperature":0.7}`, "ok: sampler min-p 1.0.0 (ABI v1)"},
		{"logit-bias", `{"logit_bias":{"5":2,"6":false}}`, "ok: processor logit-bias 1.0.0 (ABI v1)"},
		{"max-lines", `{"lines":2,"keep_newline":true}`, "ok: stop max-lines 1.0.0 (ABI v1)"},
	}
	for _, tt := range tests {
		path := "../../plugins/wasm/" + tt.file + ".wasm"
		out, stderr, code := runIn(t, "", "plugin", "check", path, "--config", tt.config, "--steps", "8", "--vocab", "1000")
		require.Equal(t, 0, code, "%s: %s", tt.file, stderr)
		assert.Contains(t, out, tt.want)
		assert.Contains(t, out, "8 steps at vocab 1000")

		_, stderr, code = runIn(t, "", "plugin", "check", path, "--config", `{"typo":1}`)
		assert.Equal(t, exitBadPlugin, code, tt.file)
		assert.Contains(t, stderr, "config: unknown key typo", tt.file)
	}
}
