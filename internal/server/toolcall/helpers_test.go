package toolcall

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// readTemplate reads one of llama.cpp's test templates, as the jinja
// package's conformance set holds them.
func readTemplate(t testing.TB, name string) string {
	b, err := os.ReadFile(filepath.Join("..", "..", "jinja", "testdata", "hf", "templates", name))
	require.NoError(t, err)
	return string(b)
}
