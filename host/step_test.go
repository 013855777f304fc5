package host_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/engine/enginetest"
	"github.com/realizar-host/realizar-host/host"
)

// TestStepDeadline: a step's plugin calls share one deadline. Two
// processors that each spin 150 ms (testdata/spin.wat) fit a 250 ms
// per-call deadline one by one, but not one 250 ms step: the second is
// stopped where the step runs out, and the error names it. One alone
// fits; a stop policy's Check takes what its step's Sample left, and a
// Check alone begins a step of its own.
func TestStepDeadline(t *testing.T) {
	const d = 250 * time.Millisecond
	h := newHost(t, host.NewConfig())
	lim := host.LoadOptions{Limits: host.Limits{CallTimeout: d}}
	greedy := load(t, h, "greedy", lim)
	spin := load(t, h, "spin", lim)
	spinStop := load(t, h, "spinstop", lim)
	vocab := enginetest.NewTokenVocab(8, nil)
	logits := []float32{0, 1, 5, 2, 0, 0, 0, 0}
	adapters := func(processors ...*host.Plugin) (*host.Sampler, *host.StopPolicy, *host.StepDeadline) {
		s, err := host.NewSampler(vocab, greedy, processors...)
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		stop, err := host.NewStopPolicy(vocab, spinStop)
		require.NoError(t, err)
		t.Cleanup(func() { _ = stop.Close() })
		sd := host.NewStepDeadline(d)
		s.SetStepDeadline(sd)
		stop.SetStepDeadline(sd)
		require.NoError(t, s.Reset(1, []int32{0}))
		require.NoError(t, stop.Reset())
		return s, stop, sd
	}

	t.Run("two processors", func(t *testing.T) {
		s, _, _ := adapters(spin, spin)
		start := time.Now()
		_, err := s.Sample(append([]float32(nil), logits...))
		elapsed := time.Since(start)
		require.ErrorIs(t, err, host.ErrPluginTimeout)
		var pe *host.PluginError
		require.ErrorAs(t, err, &pe)
		assert.Equal(t, spin.String(), pe.Plugin)
		assert.Contains(t, err.Error(), "the step's deadline of 250ms")
		t.Log(err)
		assert.Less(t, elapsed, d+150*time.Millisecond, "stopped where the step ran out, not at the second call's own deadline")
	})
	t.Run("one processor, then the stop policy", func(t *testing.T) {
		s, stop, _ := adapters(spin)
		tok, err := s.Sample(append([]float32(nil), logits...))
		require.NoError(t, err, "150 ms of 250")
		assert.Equal(t, int32(2), tok)
		s.Accept(tok)
		_, err = stop.Check(tok, []byte("t2"))
		require.ErrorIs(t, err, host.ErrPluginTimeout, "another 150 ms in the same step")
		var pe *host.PluginError
		require.ErrorAs(t, err, &pe)
		assert.Equal(t, spinStop.String(), pe.Plugin)
	})
	t.Run("a check alone", func(t *testing.T) {
		_, stop, _ := adapters()
		for range 2 { // each its own step
			_, err := stop.Check(2, []byte("t2"))
			require.NoError(t, err)
		}
	})
}
