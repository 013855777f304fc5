package parity

import (
	"flag"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// minSuiteTimeout is the least -timeout under which the whole suite may
// run: it took about 12 minutes on a 2-core machine at load 25, past go
// test's default of 10 (make test-ref gives the Makefile's REF_TIMEOUT).
const minSuiteTimeout = 30 * time.Minute

// TestSuiteTimeout fails at once, naming the flag, where the binary's
// -timeout is shorter than minSuiteTimeout, instead of letting go test
// kill the suite mid-comparison with every goroutine's stack.
func TestSuiteTimeout(t *testing.T) {
	f := flag.Lookup("test.timeout")
	require.NotNil(t, f, "go test's -timeout flag")
	d, err := time.ParseDuration(f.Value.String())
	require.NoError(t, err)
	if d != 0 && d < minSuiteTimeout {
		t.Fatalf("-timeout %v is shorter than the suite may need under load (%v); run it as make test-ref does (go test -timeout $(REF_TIMEOUT)), or a part of it with -run", d, minSuiteTimeout)
	}
}
