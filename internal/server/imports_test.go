package server

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNoGuestSDK checks with go list that the HTTP server does not link the
// WebAssembly guest SDK (abi/guest): it reaches plugins through the host and
// the chain builder only (issue 34).
func TestNoGuestSDK(t *testing.T) {
	const guest = "github.com/realizar-host/realizar-host/abi/guest"
	out, err := exec.Command("go", "list", guest).CombinedOutput()
	require.NoError(t, err, "the guest SDK is a package: %s", out)
	out, err = exec.Command("go", "list", "-deps", ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	deps := strings.Fields(string(out))
	require.Contains(t, deps, "github.com/realizar-host/realizar-host/internal/server")
	assert.NotContains(t, deps, guest)
}
