package testenv_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/internal/testenv"
)

// directRequires are the module paths go.mod requires directly (a
// require line without "// indirect"), in a block or on one line.
func directRequires(gomod string) []string {
	var out []string
	inBlock := false
	for line := range strings.SplitSeq(gomod, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "require (":
			inBlock = true
			continue
		case inBlock && line == ")":
			inBlock = false
			continue
		case strings.HasPrefix(line, "require "):
			line = strings.TrimPrefix(line, "require ")
		case !inBlock:
			continue
		}
		if f := strings.Fields(line); len(f) >= 2 && !strings.Contains(line, "// indirect") {
			out = append(out, f[0])
		}
	}
	return out
}

// readmeLibraries are the backquoted names of the library column of the
// README's dependency table (under "## Dependencies").
func readmeLibraries(t *testing.T, readme string) []string {
	_, table, ok := strings.Cut(readme, "\n## Dependencies\n")
	require.True(t, ok, "README.md has no ## Dependencies section")
	table, _, _ = strings.Cut(table, "\n## ")
	quoted := regexp.MustCompile("`([^`]+)`")
	var out []string
	for line := range strings.SplitSeq(table, "\n") {
		cells := strings.Split(line, "|")
		if !strings.HasPrefix(line, "| ") || len(cells) < 3 {
			continue
		}
		for _, m := range quoted.FindAllStringSubmatch(cells[1], -1) {
			out = append(out, strings.Fields(m[1])[0])
		}
	}
	require.NotEmpty(t, out, "README.md's dependency table has no rows")
	return out
}

// TestREADMEDependencies: every direct requirement of go.mod has a row of
// the README's dependency table (the module, or a package of it:
// golang.org/x/sys/cpu is golang.org/x/sys's).
func TestREADMEDependencies(t *testing.T) {
	gomod, err := os.ReadFile(filepath.Join(testenv.Root(), "go.mod"))
	require.NoError(t, err)
	readme, err := os.ReadFile(filepath.Join(testenv.Root(), "README.md"))
	require.NoError(t, err)
	libs := readmeLibraries(t, string(readme))
	direct := directRequires(string(gomod))
	require.NotEmpty(t, direct, "go.mod has no direct requirement")
	for _, mod := range direct {
		found := false
		for _, lib := range libs {
			found = found || lib == mod || strings.HasPrefix(lib, mod+"/")
		}
		assert.True(t, found, "go.mod requires %s directly, and README.md's dependency table has no row for it", mod)
	}
}

// TestDirectRequires: the go.mod parse.
func TestDirectRequires(t *testing.T) {
	const gomod = "module m\n\nrequire a.io/x v1.0.0\n\nrequire (\n\tb.io/y v1.2.0\n\tc.io/z v0.1.0 // indirect\n\td.io/w v0.0.1\n)\n\nrequire e.io/v v1.0.0 // indirect\n"
	assert.Equal(t, []string{"a.io/x", "b.io/y", "d.io/w"}, directRequires(gomod))
}
