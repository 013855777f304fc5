package quant

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/internal/testenv"
)

// TestPanelAsmGenerated: the committed panel kernels are what gen_panel.go
// writes, so an edit to the generator that was not regenerated (or a hand
// edit of the .s files) fails here.
func TestPanelAsmGenerated(t *testing.T) {
	goTool, err := exec.LookPath("go")
	require.NoError(t, err, "the go command runs gen_panel.go")
	dir := t.TempDir()
	out, err := exec.Command(goTool, "run", "gen_panel.go", "-dir", dir).CombinedOutput()
	require.NoError(t, err, "go run gen_panel.go: %s", out)
	for _, name := range []string{"dot_panel_amd64.s", "dot_panel_vnni_amd64.s"} {
		want, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		testenv.GeneratedFile(t, name, string(want), false, "go generate ./internal/quant")
	}
}
