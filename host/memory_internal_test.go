package host

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A guest growing toward its page cap while the host's growth of its
// memory outlasts the call deadline (allocating and copying the linear
// memory is slow on a loaded machine with costly page faults: 16 MiB took
// 380 ms on a busy 2-core VM) reaches its cap and is reported as
// ErrPluginMemory, not ErrPluginTimeout: the host's time growing the memory
// is not charged to the guest's deadline (nor to the init deadline, nor to
// a StepDeadline). growHook makes every growth last three deadlines, so
// without that rule the deadline always fires during the first one,
// whatever the machine's speed.
func TestMemoryCapWinsOverDeadlineDuringGrowth(t *testing.T) {
	const deadline = 300 * time.Millisecond
	wasm, err := os.ReadFile("testdata/bad.wasm")
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		call time.Duration // Limits.CallTimeout
		step time.Duration // a StepDeadline's D, 0 for none
	}{
		{"call deadline", deadline, 0},
		{"step deadline", 20 * time.Second, deadline},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := New(context.Background(), NewConfig())
			require.NoError(t, err)
			t.Cleanup(func() { _ = h.Close(context.Background()) })
			var grows int
			h.growHook = func() { grows++; time.Sleep(3 * deadline) }
			// bad.wat: instantiation sizes the memory (2 pages), init grows
			// it by 1 for the region (3), seed 3 grows by 16 pages (19)
			// until refused (35 > 20), then traps.
			p, err := h.Load(context.Background(), wasm, LoadOptions{Limits: Limits{MemoryPages: 20, CallTimeout: tc.call, InitTimeout: deadline}})
			require.NoError(t, err)
			s, err := NewSampler(benchVocab(1000), p)
			require.NoError(t, err)
			t.Cleanup(func() { _ = s.Close() })
			var sd *StepDeadline
			if tc.step > 0 {
				sd = NewStepDeadline(tc.step)
				s.SetStepDeadline(sd)
			}
			require.NoError(t, s.Reset(3, nil))
			_, err = s.Sample(make([]float32, 1000))
			require.ErrorIs(t, err, ErrPluginMemory)
			assert.False(t, errors.Is(err, ErrPluginTimeout), "%v", err)
			assert.Contains(t, err.Error(), "asked to grow memory past 20 pages")
			assert.Equal(t, 3, grows, "instantiation's, init's and the step's one growth below the cap")
			if sd != nil {
				assert.Less(t, sd.used, deadline, "the growth is not charged to the step either (the rest of it is left to the step's other calls)")
			}
		})
	}
}
