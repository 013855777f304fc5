package pgstore

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoServerImport: pgstore implements tenancy's Store and TenantSource
// without importing the HTTP server it is plugged into (RATIONALE.md).
func TestNoServerImport(t *testing.T) {
	// The go command runs the tests, so it is there: its absence fails.
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if p == "github.com/realizar-host/realizar-host/internal/server" {
			t.Fatalf("pgstore imports %s", p)
		}
	}
}
