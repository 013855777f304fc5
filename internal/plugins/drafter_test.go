package plugins_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/engine"
	"github.com/realizar-host/realizar-host/engine/enginetest"
	"github.com/realizar-host/realizar-host/host"
	"github.com/realizar-host/realizar-host/internal/draft"
	"github.com/realizar-host/realizar-host/internal/plugins"
)

// TestLookupDrafter: the embedded lookup drafter (C, ABI 2) drafts exactly
// what the host's built-in lookup (package draft) drafts, call by call,
// for each config, while a simulated chain accepts the drafts' leading
// tokens that match a fixed text and appends one token more, as the
// engine does.
func TestLookupDrafter(t *testing.T) {
	h := newHost(t, host.NewConfig())
	// A text with repeats of several lengths, and stretches with none.
	var text []int32
	for r := range 6 {
		text = append(text, 10, 11, 12, 13, 14, 15, 16, 17)
		for j := range 5 + r {
			text = append(text, int32(30+7*r+j))
		}
		text = append(text, 10, 11, int32(40+r), 12, 13)
	}
	tests := []struct {
		config string
		opts   draft.LookupOptions
	}{
		{"", draft.LookupOptions{}},
		{`{"min_ngram":1,"max_ngram":3,"max_draft":5}`, draft.LookupOptions{MinNgram: 1, MaxNgram: 3, MaxDraft: 5}},
		{`{"max_draft":32}`, draft.LookupOptions{MaxDraft: 32}},
	}
	for _, tt := range tests {
		t.Run(tt.config, func(t *testing.T) {
			p := load(t, h, plugins.LookupBuiltin, tt.config)
			d, err := host.NewDrafter(enginetest.NewTokenVocab(100, nil), p)
			require.NoError(t, err)
			defer d.Close()
			for turn := range 2 { // the second turn starts afresh
				ref := draft.NewLookup(tt.opts)
				prompt := text[:6+turn]
				d.Reset(prompt)
				ref.Reset(prompt)
				seq := append([]int32(nil), prompt...)
				drafted := 0
				for len(seq) < len(text) {
					limit := min(1+len(seq)%9, len(text)-len(seq))
					want := ref.Draft(nil, seq, limit)
					got := d.Draft(nil, seq, limit)
					require.NoError(t, d.Err())
					require.Equal(t, want, got, "at %d", len(seq))
					acc := 0
					for acc < len(got) && len(seq)+acc < len(text) && got[acc] == text[len(seq)+acc] {
						acc++
					}
					if len(got) > 0 {
						ref.Accepted(len(got), acc)
						d.Accepted(len(got), acc)
						drafted += len(got)
					}
					seq = text[:min(len(seq)+acc+1, len(text))]
				}
				assert.Positive(t, drafted)
			}
		})
	}
}

// The lookup drafter refuses a config it cannot use, naming the key.
func TestLookupDrafterConfig(t *testing.T) {
	h := newHost(t, host.NewConfig())
	for _, bad := range []string{`{"max_draft":33}`, `{"min_ngram":3,"max_ngram":2}`, `{"ngram":2}`, `{"max_draft":"x"}`} {
		p, err := h.Load(context.Background(), wasm(t, plugins.LookupBuiltin), host.LoadOptions{Config: []byte(bad), Kind: abi.KindDrafter})
		require.NoError(t, err)
		d, err := host.NewDrafter(enginetest.NewTokenVocab(100, nil), p)
		require.NoError(t, err)
		d.Reset([]int32{1, 2, 1})
		assert.ErrorIs(t, d.Err(), host.ErrBadConfig, bad)
		assert.Empty(t, d.Draft(nil, []int32{1, 2, 1}, 4), bad)
		_ = d.Close()
	}
}

var _ engine.Drafter = (*host.Drafter)(nil)
