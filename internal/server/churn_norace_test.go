//go:build linux && !race

package server

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/host"
	"github.com/realizar-host/realizar-host/internal/tenancy"
)

// settledRSS is the process's resident set after two collections (and a
// moment for the cleanups they queue) with memory returned to the OS, in
// bytes.
func settledRSS(t testing.TB) int64 {
	heapInuse()
	return rssNow(t)
}

// TestUploadChurnRSS: a tenant uploading and deleting 20 distinct
// modules of 140 KB of code, five times over, leaves the server's
// resident memory within 32 MiB of where the first round left it (issue
// 30's server grew by 70-160 MiB a round; compiled code kept after its
// delete is about 20 MiB a round here). 5-15 s on a 2-core machine;
// not built under the race detector, where compiling is several times
// slower (TestCompiledModulesClosed checks the release there).
func TestUploadChurnRSS(t *testing.T) {
	tenants := fmt.Appendf(nil, `{"defaults": {"requests_per_minute": 100000},
  "tenants": [{"name": "a", "key_sha256": [%q]}]}`, tenancy.HashKey(keyA))
	s := startServerHost(t, tenants, Config{Queue: 8}, host.NewConfig(), nil)
	const rounds, modules, slack = 5, 20, 32 << 20
	start := settledRSS(t)
	var first int64
	for r := range rounds {
		for i := range modules {
			wasm, err := codeModule(fmt.Sprintf("r%d-%d", r, i))
			require.NoError(t, err)
			sum := s.upload(t, keyA, wasm)
			code, body := s.do(t, "DELETE", "/v1/plugins/"+sum, keyA, nil)
			require.Equal(t, http.StatusOK, code, string(body))
		}
		rss := settledRSS(t)
		t.Logf("round %d: RSS %d MiB (%d MiB at the start)", r+1, rss>>20, start>>20)
		if r == 0 {
			first = rss
			continue
		}
		assert.LessOrEqual(t, rss, first+slack, "round %d: RSS %d MiB, the first round's %d MiB", r+1, rss>>20, first>>20)
	}
}
