package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPromptText: exactly one source, --prompt first; one trailing newline
// is dropped from a file or stdin, never from --prompt.
func TestPromptText(t *testing.T) {
	dir := t.TempDir()
	file := func(name, text string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
		return p
	}
	crlf, nl, two, empty := file("crlf", "Once\r\n"), file("nl", "Once\n"), file("two", "Once\n\n"), file("empty", "\n")
	tests := []struct {
		name  string
		args  []string
		stdin string
		want  string
		code  int // 0: no error
	}{
		{"flag as is", []string{"--prompt", "Once\n"}, "ignored", "Once\n", 0},
		{"flag wins over stdin", []string{"-p", "Once"}, "other", "Once", 0},
		{"empty flag", []string{"--prompt", ""}, "stdin text", "", exitUsage},
		{"both flags", []string{"-p", "x", "-f", nl}, "", "", exitUsage},
		{"file newline", []string{"-f", nl}, "", "Once", 0},
		{"file crlf", []string{"-f", crlf}, "", "Once", 0},
		{"file keeps the second newline", []string{"-f", two}, "", "Once\n", 0},
		{"file of one newline", []string{"-f", empty}, "", "", exitBadFile},
		{"missing file", []string{"-f", filepath.Join(dir, "absent")}, "", "", exitBadFile},
		{"stdin newline", nil, "Once upon a time\n", "Once upon a time", 0},
		{"stdin crlf", nil, "Once upon a time\r\n", "Once upon a time", 0},
		{"stdin bare", nil, "Once", "Once", 0},
		{"stdin lone cr kept", nil, "Once\r", "Once\r", 0},
		{"empty stdin", nil, "", "", exitUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := newRunCmd()
			require.NoError(t, cmd.ParseFlags(tt.args))
			var o runOptions
			o.prompt, _ = cmd.Flags().GetString("prompt")
			o.promptFile, _ = cmd.Flags().GetString("prompt-file")
			got, err := o.promptText(cmd.Flags(), strings.NewReader(tt.stdin))
			if tt.code != 0 {
				var ce *cmdError
				require.ErrorAs(t, err, &ce)
				assert.Equal(t, tt.code, ce.code, err.Error())
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}
