package forward_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const module = "github.com/realizar-host/realizar-host/"

// TestForwardsDoNotImportTheLoop checks the import graph with go list: the
// forwards (model, cuda under each of its build tags) and this contract
// depend on no package that drives them (the decode loop, the batcher, the
// server).
func TestForwardsDoNotImportTheLoop(t *testing.T) {
	loop := []string{"engine", "internal/serving", "internal/server", "host", "embedding", "internal/draft"}
	// A name that no longer names a package would make every check below pass.
	out, err := exec.Command("go", append([]string{"list"}, prefixed(loop)...)...).CombinedOutput()
	require.NoError(t, err, "every package of the loop exists: %s", out)
	tests := []struct {
		pkg, tags string
	}{
		{"forward", ""},
		{"model", ""},
		{"internal/cuda", ""},
		{"internal/cuda", "cuda"},
		{"internal/cuda", "cudaemu"},
	}
	for _, tt := range tests {
		t.Run(tt.pkg+"/"+tt.tags, func(t *testing.T) {
			out, err := exec.Command("go", "list", "-tags", tt.tags, "-deps", module+tt.pkg).CombinedOutput()
			require.NoError(t, err, "%s", out)
			deps := strings.Fields(string(out))
			require.Contains(t, deps, module+tt.pkg)
			for _, p := range loop {
				assert.NotContains(t, deps, module+p, "%s (tags %q) imports %s", tt.pkg, tt.tags, p)
			}
		})
	}
}

// prefixed gives each of pkgs as a full import path.
func prefixed(pkgs []string) []string {
	full := make([]string, len(pkgs))
	for i, p := range pkgs {
		full[i] = module + p
	}
	return full
}
