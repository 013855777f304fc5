package model

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// glibcTable reads a golden file of glibc results (testdata/*_glibc.txt):
// one row per line of cols hex words (the input's float32 bits, then each
// result's), '#' lines skipped.
func glibcTable(t *testing.T, path string, cols int) [][]uint32 {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var rows [][]uint32
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		fields := strings.Fields(line)
		require.Len(t, fields, cols, "%s: %q", path, line)
		row := make([]uint32, cols)
		for i, fld := range fields {
			_, err := fmt.Sscanf(fld, "%x", &row[i])
			require.NoError(t, err, "%s: %q", path, line)
		}
		rows = append(rows, row)
	}
	require.NoError(t, sc.Err())
	return rows
}
