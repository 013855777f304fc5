package gguf

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// mappingRSS returns the resident kB of the mapping that starts at b's
// first byte, from /proc/self/smaps.
func mappingRSS(t *testing.T, b []byte) int {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	require.NoError(t, err)
	defer f.Close()
	start := fmt.Sprintf("%x-", uintptr(unsafe.Pointer(&b[0])))
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		// A mapping's header: "start-end perms offset dev inode [path]".
		if f := strings.Fields(line); len(f) >= 5 && strings.Contains(f[0], "-") && len(f[1]) == 4 {
			in = strings.HasPrefix(line, start)
			continue
		}
		var kb int
		if in && strings.HasPrefix(line, "Rss:") {
			_, err := fmt.Sscanf(line, "Rss: %d kB", &kb)
			require.NoError(t, err)
			return kb
		}
	}
	require.NoError(t, sc.Err())
	t.Fatalf("no mapping at %s in /proc/self/smaps", start)
	return 0
}

// touchSink keeps the reads that page a mapping in.
var touchSink byte

// On Linux the released pages leave the process's resident memory.
func TestReleasePagesDropsResidentPages(t *testing.T) {
	path, _ := writeBig(t)
	f, err := Open(path)
	require.NoError(t, err)
	defer f.Close()
	data, err := f.TensorData("big")
	require.NoError(t, err)
	for i := 0; i < len(data); i += 512 {
		touchSink ^= data[i]
	}
	m := f.shards[0].data
	require.GreaterOrEqual(t, mappingRSS(t, m), len(data)>>10, "the read pages are resident")
	f.ReleasePages(data)
	require.Less(t, mappingRSS(t, m), 16, "the released pages are not (the header's page and the tensor's partial pages may stay)")
}
