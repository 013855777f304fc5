package arch_test

import (
	"flag"
	"strings"
	"testing"

	"github.com/realizar-host/realizar-host/internal/arch"
	"github.com/realizar-host/realizar-host/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite the README's table of architectures from the registry")

// The README's table lies between these lines.
const (
	tableBegin = "<!-- architectures: generated from package internal/arch; go test ./internal/arch -run TestREADMETable -update -->\n"
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
	testenv.Generated(t, "../../README.md", tableBegin, tableEnd, markdownTable(), *update, "go test ./internal/arch -run TestREADMETable -update")
}
