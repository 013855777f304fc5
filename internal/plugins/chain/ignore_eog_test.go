package chain_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/internal/plugins/chain"
)

// TestCheckIgnoreEOG: a structured output (JSON mode or a grammar) with
// ignore_eos is an *IgnoreEOGError naming both; anything else passes.
func TestCheckIgnoreEOG(t *testing.T) {
	dry := &chain.Part{Param: "dry_multiplier"}
	for _, tc := range []struct {
		name   string
		spec   chain.Spec
		ignore bool
		with   string // "": no error
	}{
		{"json mode", chain.Spec{JSONMode: &chain.Part{Param: "response_format"}}, true, "response_format"},
		{"grammar", chain.Spec{Grammar: &chain.Part{Param: "tools"}}, true, "tools"},
		{"json mode without ignore_eos", chain.Spec{JSONMode: &chain.Part{Param: "response_format"}}, false, ""},
		{"grammar without ignore_eos", chain.Spec{Grammar: &chain.Part{Param: "grammar"}}, false, ""},
		{"no structured output", chain.Spec{DRY: dry, Processors: []chain.Part{{Param: "p"}}}, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.spec.CheckIgnoreEOG(tc.ignore, "ignore_eos")
			if tc.with == "" {
				assert.NoError(t, err)
				return
			}
			var ie *chain.IgnoreEOGError
			require.ErrorAs(t, err, &ie)
			assert.Equal(t, chain.IgnoreEOGError{Param: "ignore_eos", With: tc.with}, *ie)
			assert.Contains(t, err.Error(), "ignore_eos cannot go with "+tc.with)
		})
	}
}
