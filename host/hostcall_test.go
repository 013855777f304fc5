package host_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/engine/enginetest"
	"github.com/realizar-host/realizar-host/host"
)

// TestLongHostCall (issue 19): a guest's fd_write over 2,000,000 iovecs
// of 64 KiB is refused (EINVAL: more than abi.WASIMaxIovecs) at once, and
// a guest calling fd_write with the most iovecs in a loop is cut at its
// deadline, within slack: host calls do not run past the call's deadline.
func TestLongHostCall(t *testing.T) {
	const timeout = 250 * time.Millisecond
	h := newHost(t, host.NewConfig())
	p := load(t, h, "iovbomb", host.LoadOptions{Limits: host.Limits{MemoryPages: 512, CallTimeout: timeout, InitTimeout: 10 * time.Second}})
	const n = 64
	s := newSampler(t, enginetest.NewTokenVocab(n, nil), p)

	require.NoError(t, s.Reset(0, nil))
	start := time.Now()
	got, err := s.Sample(make([]float32, n))
	require.NoError(t, err)
	assert.Equal(t, int32(abi.ErrnoInval), got, "fd_write's errno")
	assert.Less(t, time.Since(start), timeout)

	require.NoError(t, s.Reset(1, nil))
	start = time.Now()
	_, err = s.Sample(make([]float32, n))
	elapsed := time.Since(start)
	require.ErrorIs(t, err, host.ErrPluginTimeout)
	assert.Less(t, elapsed, timeout+500*time.Millisecond)
	t.Logf("the looping guest ended after %v (deadline %v)", elapsed.Round(time.Millisecond), timeout)

	// The next turn gets a fresh instance.
	require.NoError(t, s.Reset(0, nil))
	got, err = s.Sample(make([]float32, n))
	require.NoError(t, err)
	assert.Equal(t, int32(abi.ErrnoInval), got)
}
