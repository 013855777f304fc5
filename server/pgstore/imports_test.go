package pgstore

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoServerImport: pgstore implements tenancy's Store and TenantSource
// without importing the HTTP server it is plugged into (RATIONALE.md).
func TestNoServerImport(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command:", err)
	}
	out, err := exec.Command(gobin, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if p == "github.com/realizar-host/realizar-host/server" {
			t.Fatalf("pgstore imports %s", p)
		}
	}
}
