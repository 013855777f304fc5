package host_test

import (
	"errors"
	"fmt"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/engine"
	"github.com/realizar-host/realizar-host/engine/enginetest"
	"github.com/realizar-host/realizar-host/forward"
	"github.com/realizar-host/realizar-host/host"
)

// Deadlines short enough that the looping guests are cut quickly, long
// enough that a well-behaved call (or a memory grow the cap refuses) never
// misses them under -race on a loaded 2-core machine.
var testLimits = host.Limits{MemoryPages: 64, CallTimeout: time.Second, InitTimeout: 2 * time.Second}

// requirePluginError checks err is a *host.PluginError naming the bad
// plugin and wrapping want, and returns it.
func requirePluginError(t *testing.T, err error, want error) *host.PluginError {
	t.Helper()
	require.ErrorIs(t, err, want)
	var pe *host.PluginError
	require.True(t, errors.As(err, &pe), "%T %v", err, err)
	assert.Contains(t, pe.Plugin, " bad ")
	assert.NotContains(t, err.Error(), "\n", "a plugin's failure is one line (no wasm stack trace)")
	return pe
}

// works checks that a turn on s runs normally: Reset(0) and a correct argmax.
func works(t *testing.T, s *host.Sampler, n int) {
	t.Helper()
	require.NoError(t, s.Reset(0, []int32{1}))
	logits := randomLogits(99, n)
	got, err := s.Sample(logits)
	require.NoError(t, err)
	require.Equal(t, argmax(logits), got)
}

// The runtime half of the bad-plugin suite (testdata/bad.wat): each
// misbehaviour gives its typed error, and the very next turn on the same
// Sampler works.
func TestBadPluginTurns(t *testing.T) {
	var now atomic.Int64
	h := newHost(t, host.NewConfig().WithNanotime(now.Load))
	const n = 1000
	bad := load(t, h, "bad", host.LoadOptions{Limits: testLimits})
	s := newSampler(t, enginetest.NewTokenVocab(n, nil), bad)

	for _, tc := range []struct {
		name string
		seed uint64
		want error
	}{
		{"sample loops forever", 1, host.ErrPluginTimeout},
		{"sample traps", 2, host.ErrPluginTrap},
		{"grows memory past the cap", 3, host.ErrPluginMemory},
		{"grows memory past the cap, then runs past its deadline", 10, host.ErrPluginMemory},
		{"returns -1", 4, forward.ErrBadToken},
		{"returns n_vocab", 5, forward.ErrBadToken},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.NoError(t, s.Reset(tc.seed, []int32{1}))
			_, err := s.Sample(randomLogits(1, n))
			requirePluginError(t, err, tc.want)
			works(t, s, n)
		})
	}

	t.Run("error carries the last log line", func(t *testing.T) {
		require.NoError(t, s.Reset(9, nil))
		_, err := s.Sample(randomLogits(1, n))
		pe := requirePluginError(t, err, forward.ErrBadToken)
		assert.Contains(t, string(s.Log()[0]), "[error] mode 9: giving up")
		assert.Equal(t, "step", pe.Phase)
		assert.Contains(t, pe.LastLog, "[error] mode 9: giving up")
		assert.Contains(t, err.Error(), `(last log line: "[error] mode 9: giving up`)
		works(t, s, n)
	})

	t.Run("garbage in its own buffer", func(t *testing.T) {
		require.NoError(t, s.Reset(6, nil))
		for step := uint64(0); step < 3; step++ {
			logits := randomLogits(step+10, n)
			got, err := s.Sample(logits)
			require.NoError(t, err)
			require.Equal(t, argmax(logits), got, "the host rewrites the region every step and never reads it back")
		}
	})

	for _, tc := range []struct {
		name string
		seed uint64
		want error
	}{
		{"reset loops forever", 7, host.ErrPluginTimeout},
		{"reset traps", 8, host.ErrPluginTrap},
	} {
		t.Run(tc.name, func(t *testing.T) {
			requirePluginError(t, s.Reset(tc.seed, nil), tc.want)
			_, err := s.Sample(randomLogits(1, n))
			require.ErrorIs(t, err, host.ErrNoInstance, "the turn is over")
			works(t, s, n)
		})
	}

	for _, tc := range []struct {
		name  string
		clock int64
		want  error
	}{
		{"init loops forever", 13, host.ErrPluginTimeout},
		{"init traps", 14, host.ErrPluginTrap},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSampler(t, enginetest.NewTokenVocab(n, nil), bad)
			now.Store(tc.clock)
			requirePluginError(t, s.Reset(0, nil), tc.want)
			now.Store(0)
			works(t, s, n)
		})
	}

	t.Run("refuses its config", func(t *testing.T) {
		p := load(t, h, "bad", host.LoadOptions{Limits: testLimits, Config: []byte(`{"refuse":true}`)})
		requirePluginError(t, newSampler(t, enginetest.NewTokenVocab(n, nil), p).Reset(0, nil), host.ErrBadConfig)
	})
	assert.Equal(t, 1, h.LiveInstances(), "only the Sampler's current instance is alive")
}

// A stop policy that traps, and one that answers an action that does not
// exist; the next turn works.
func TestBadStopPolicy(t *testing.T) {
	h := newHost(t, host.NewConfig().WithNanotime(func() int64 { return 0 }))
	sp, err := host.NewStopPolicy(enginetest.NewTokenVocab(1000, nil), load(t, h, "clock", host.LoadOptions{Limits: testLimits}))
	require.NoError(t, err)
	defer sp.Close()
	for token, want := range map[int32]error{999: host.ErrPluginTrap, 998: host.ErrBadResult} {
		require.NoError(t, sp.Reset())
		_, err := sp.Check(token, []byte("x"))
		require.ErrorIs(t, err, want)
		var pe *host.PluginError
		require.True(t, errors.As(err, &pe))
		assert.Equal(t, "check", pe.Phase)
		require.NoError(t, sp.Reset())
		d, err := sp.Check(1, []byte("x"))
		require.NoError(t, err)
		assert.Equal(t, engine.Continue, d.Action)
	}
}

// Two Sessions with the same plugin on different goroutines see neither each
// other's memory (the probe's step counter) nor RNG state (random_get).
// Run with -race.
func TestIsolation(t *testing.T) {
	h := newHost(t, host.NewConfig())
	p := load(t, h, "probe", host.LoadOptions{})
	const n, steps = 5000, 300
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for g := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[g] = func() error {
				s, err := host.NewSampler(enginetest.NewTokenVocab(n, nil), p)
				if err != nil {
					return err
				}
				defer s.Close()
				seed := uint64(1000 + g%2) // two pairs share a seed
				for turn := 0; turn < 3; turn++ {
					if err := s.Reset(seed, []int32{int32(g)}); err != nil {
						return err
					}
					want := probeTokens(seed, n, steps, 0, g)
					logits := make([]float32, n)
					for k := range want {
						got, err := s.Sample(logits)
						if err != nil {
							return err
						}
						if got != want[k] {
							return fmt.Errorf("goroutine %d turn %d step %d: got %d want %d", g, turn, k, got, want[k])
						}
						s.Accept(got)
						runtime.Gosched()
					}
				}
				return nil
			}()
		}()
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
}

// 1000 Sessions create and discard instances, one in ten timing out; the
// goroutines and the wazero memories come back to where they started.
func TestNoLeak(t *testing.T) {
	h := newHost(t, host.NewConfig())
	bad := load(t, h, "bad", host.LoadOptions{Limits: host.Limits{CallTimeout: 20 * time.Millisecond}})
	greedy := load(t, h, "greedy", host.LoadOptions{})
	const n = 256
	// Warm up once so lazily started runtime goroutines are counted.
	s := newSampler(t, enginetest.NewTokenVocab(n, nil), greedy)
	works(t, s, n)
	require.NoError(t, s.Close())
	goroutines := runtime.NumGoroutine()

	for i := 0; i < 1000; i++ {
		p, seed := greedy, uint64(0)
		if i%10 == 0 {
			p, seed = bad, 1 // loops in sample until the deadline
		}
		s, err := host.NewSampler(enginetest.NewTokenVocab(n, nil), p)
		require.NoError(t, err)
		if err = s.Reset(seed, nil); err == nil {
			_, err = s.Sample(randomLogits(uint64(i), n))
		}
		if seed == 1 { // under -race on a loaded machine even reset can miss 20ms
			require.ErrorIs(t, err, host.ErrPluginTimeout)
		} else {
			require.NoError(t, err)
		}
		require.NoError(t, s.Close())
	}
	assert.Equal(t, 0, h.LiveInstances())
	// Poll on this goroutine: assert.Eventually runs its condition on a
	// goroutine of its own, which the count would include.
	for deadline := time.Now().Add(10 * time.Second); runtime.NumGoroutine() > goroutines && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > goroutines {
		var stacks strings.Builder
		_ = pprof.Lookup("goroutine").WriteTo(&stacks, 1)
		t.Errorf("goroutines: %d before, %d after:\n%s", goroutines, n, stacks.String())
	}
}
