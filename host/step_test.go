package host_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/engine/enginetest"
	"github.com/realizar-host/realizar-host/host"
)

// TestStepDeadline: a step's plugin calls share one deadline, proved
// without timing anything. Every plugin's own per-call deadline is an hour,
// so a call that ends at all was ended by the step's deadline (a hang
// would fail the test at go test's -timeout); and where the step has
// nothing left, the next call is not made, which its error says ("before
// this call"), whereas a call the step's deadline cut says "during this
// call". The hang and hangstop plugins loop forever; a machine however
// loaded only makes them loop longer before the deadline.
func TestStepDeadline(t *testing.T) {
	const d = 200 * time.Millisecond // the step's deadline
	h := newHost(t, host.NewConfig())
	lim := host.LoadOptions{Limits: host.Limits{CallTimeout: time.Hour}}
	greedy := load(t, h, "greedy", lim)
	ban := load(t, h, "ban", lim)
	hang := load(t, h, "hang", lim)
	hangStop := load(t, h, "hangstop", lim)
	vocab := enginetest.NewTokenVocab(8, nil)
	logits := []float32{0, 1, 5, 2, 0, 0, 0, 0}
	adapters := func(processors ...*host.Plugin) (*host.Sampler, *host.StopPolicy) {
		s, err := host.NewSampler(vocab, greedy, processors...)
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		stop, err := host.NewStopPolicy(vocab, hangStop)
		require.NoError(t, err)
		t.Cleanup(func() { _ = stop.Close() })
		sd := host.NewStepDeadline(d)
		s.SetStepDeadline(sd)
		stop.SetStepDeadline(sd)
		require.NoError(t, s.Reset(1, []int32{0}))
		require.NoError(t, stop.Reset())
		return s, stop
	}
	// cut asserts that err is the step's deadline stopping plugin p: during
	// its call, or (before) ahead of it.
	cut := func(t *testing.T, err error, p *host.Plugin, before bool) {
		t.Helper()
		require.ErrorIs(t, err, host.ErrPluginTimeout)
		var pe *host.PluginError
		require.ErrorAs(t, err, &pe)
		assert.Equal(t, p.String(), pe.Plugin)
		assert.Contains(t, err.Error(), "the step's deadline of 200ms")
		if before {
			assert.Contains(t, err.Error(), "ran out before this call")
		} else {
			assert.Contains(t, err.Error(), "ran out during this call")
		}
		t.Log(err)
	}

	t.Run("two processors", func(t *testing.T) {
		// The first returns; the second, allowed an hour of its own, is
		// stopped by what is left of the step.
		s, _ := adapters(ban, hang)
		_, err := s.Sample(append([]float32(nil), logits...))
		cut(t, err, hang, false)
	})
	t.Run("the stop policy gets what the sample left", func(t *testing.T) {
		// The sample's processor used the whole step, so the check that
		// follows in the same step is not made.
		s, stop := adapters(hang)
		_, err := s.Sample(append([]float32(nil), logits...))
		cut(t, err, hang, false)
		_, err = stop.Check(2, []byte("t2"))
		cut(t, err, hangStop, true)
	})
	t.Run("a check alone", func(t *testing.T) {
		// A check with no sample before it begins a step of its own: after
		// a check that used a whole step, the next is made (and cut again)
		// rather than refused.
		_, stop := adapters()
		for range 2 {
			_, err := stop.Check(2, []byte("t2"))
			cut(t, err, hangStop, false)
			require.NoError(t, stop.Reset(), "a fresh instance for the next check")
		}
	})
}
