package arch_test

import (
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/arch"
)

var update = flag.Bool("update", false, "rewrite the README's table of architectures from the registry")

// The README's table lies between these lines.
const (
	tableBegin = "<!-- architectures: generated from package arch; go test ./arch -run TestREADMETable -update -->\n"
	tableEnd   = "<!-- end of architectures -->\n"
)

// markdownTable is the registry as the README's table.
func markdownTable() string {
	var b strings.Builder
	b.WriteString("| `general.architecture` | models | block | RoPE | GPU forward | fixture presets |\n")
	b.WriteString("|---|---|---|---|---|---|\n")
	for _, n := range arch.Names() {
		a, _ := arch.Lookup(n)
		rope := "adjacent pairs (norm)"
		if a.Rope == arch.RopeNeox {
			rope = "half-rotation pairs (neox)"
		}
		gpu := "no (CPU)"
		if a.GPU {
			gpu = "yes"
		}
		var presets []string
		for _, p := range a.Presets {
			presets = append(presets, "`"+p.PresetName()+"`")
		}
		b.WriteString("| " + strings.Join([]string{"`" + n + "`", a.Models, strings.Join(a.Features(), "; "), rope, gpu,
			strings.Join(presets, ", ")}, " | ") + " |\n")
	}
	return b.String()
}

// TestREADMETable: the README's table of architectures is markdownTable's
// (with -update, it is rewritten).
func TestREADMETable(t *testing.T) {
	const path = "../README.md"
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	readme := string(raw)
	begin := strings.Index(readme, tableBegin)
	end := strings.Index(readme, tableEnd)
	require.True(t, begin >= 0 && end > begin, "README: the table's marker lines")
	got := readme[begin+len(tableBegin) : end]
	want := markdownTable()
	if *update && got != want {
		readme = readme[:begin+len(tableBegin)] + want + readme[end:]
		require.NoError(t, os.WriteFile(path, []byte(readme), 0o644))
		got = want
	}
	assert.Equal(t, want, got, "README's table differs from the registry: run go test ./arch -run TestREADMETable -update")
}
