package host_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/engine/enginetest"
	"github.com/realizar-host/realizar-host/forward"
	"github.com/realizar-host/realizar-host/host"
)

// newDrafter adapts the test drafter (testdata/drafter.wat) in mode
// under limits.
func newDrafter(t *testing.T, h *host.Host, mode int, limits host.Limits) *host.Drafter {
	t.Helper()
	p := load(t, h, "drafter", host.LoadOptions{Kind: abi.KindDrafter, Limits: limits, Config: []byte(fmt.Sprintf(`{"mode":%d}`, mode))})
	d, err := host.NewDrafter(enginetest.NewTokenVocab(100, nil), p)
	require.NoError(t, err)
	t.Cleanup(func() { _ = d.Close() })
	return d
}

// The drafter learns the sequence incrementally (the prompt at reset, then
// the tokens since its last call) and the outcome of its last draft.
func TestDrafterIncremental(t *testing.T) {
	h := newHost(t, host.NewConfig())
	d := newDrafter(t, h, 7, host.Limits{}) // drafts [tokens seen, accepted sum]
	seq := []int32{7, 1, 2, 3}
	d.Reset(seq)
	assert.Equal(t, []int32{4, 0}, d.Draft(nil, seq, 8))
	seq = append(seq, 5, 6)
	d.Accepted(2, 1)
	assert.Equal(t, []int32{6, 1}, d.Draft(nil, seq, 8))
	d.Accepted(2, 2)
	assert.Equal(t, []int32{6, 3}, d.Draft(nil, seq, 8), "no new token: n_new 0")
	require.NoError(t, d.Err())
	d.SetMaxDraft(1)
	d.Accepted(0, 0)
	assert.Empty(t, d.Draft(nil, seq, 8), "mode 7 answers 2 where 1 was asked for")
	require.ErrorIs(t, d.Err(), host.ErrBadResult)

	// A new turn starts from its own prompt.
	d.SetMaxDraft(0)
	d.Reset(seq[:3])
	assert.Equal(t, []int32{3, 0}, d.Draft([]int32{42}, seq[:3], 8)[1:])

	// Wrong drafts are still drafts: the chain verifies them.
	d = newDrafter(t, h, 0, host.Limits{})
	d.Reset([]int32{0})
	got := d.Draft(nil, []int32{0, 9}, 5)
	assert.Equal(t, []int32{7, 8, 9, 10, 11}, got)
	require.NoError(t, d.Err())
}

// A drafter that fails costs only its own turn's drafts: Draft proposes
// nothing for the rest of the turn, Err names the plugin and the cause,
// and the next Reset starts afresh.
func TestDrafterFailures(t *testing.T) {
	h := newHost(t, host.NewConfig())
	tight := host.Limits{CallTimeout: 100 * time.Millisecond, InitTimeout: 60 * time.Second, MemoryPages: 16}
	tests := []struct {
		mode int32
		want error
	}{
		{1, host.ErrPluginTrap},
		{2, host.ErrPluginTimeout},
		{3, forward.ErrBadToken},
		{4, host.ErrBadResult},
		{5, host.ErrPluginFailed},
		{6, host.ErrPluginMemory},
	}
	for _, tt := range tests {
		t.Run(tt.want.Error(), func(t *testing.T) {
			d := newDrafter(t, h, int(tt.mode), tight)
			seq := []int32{0, 1, 2}
			d.Reset(seq)
			assert.Empty(t, d.Draft(nil, seq, 4))
			require.ErrorIs(t, d.Err(), tt.want)
			var pe *host.PluginError
			require.True(t, errors.As(d.Err(), &pe))
			assert.Contains(t, pe.Plugin, "drafter liar")
			assert.Empty(t, d.Draft([]int32{5}, append(seq, 3), 4)[1:], "off for the rest of the turn")
			// The next turn starts afresh (re-instantiated if discarded)
			// and fails alike.
			d.Reset([]int32{0, 1})
			assert.Empty(t, d.Draft(nil, []int32{0, 1}, 3))
			require.ErrorIs(t, d.Err(), tt.want)
		})
	}
}

// The drafter kind is ABI 2; its exports and kind are checked at load.
func TestDrafterLoad(t *testing.T) {
	h := newHost(t, host.NewConfig())
	_, err := h.Load(context.Background(), wasmFile(t, "drafter1"), host.LoadOptions{})
	assert.ErrorIs(t, err, host.ErrABIVersion)
	_, err = h.Load(context.Background(), wasmFile(t, "drafter"), host.LoadOptions{Kind: abi.KindSampler})
	assert.ErrorIs(t, err, host.ErrKind)
	_, err = host.NewDrafter(enginetest.NewTokenVocab(100, nil), load(t, h, "greedy", host.LoadOptions{}))
	assert.ErrorIs(t, err, host.ErrKind)
	p := load(t, h, "drafter", host.LoadOptions{})
	assert.Equal(t, abi.KindDrafter, p.Kind())
	_, err = host.NewSampler(enginetest.NewTokenVocab(100, nil), p)
	assert.ErrorIs(t, err, host.ErrKind)
}
