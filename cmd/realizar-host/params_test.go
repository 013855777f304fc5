package main

import (
	"encoding/json"
	"math"
	"strconv"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/internal/plugins/sampling"
)

// newPolicyFlags registers the policy flags on a fresh command and parses args.
func newPolicyFlags(t *testing.T, args ...string) (*policyFlags, *cobra.Command) {
	t.Helper()
	cmd := &cobra.Command{Use: "run"}
	p := &policyFlags{}
	p.register(cmd)
	require.NoError(t, cmd.Flags().Parse(args))
	return p, cmd
}

// TestFlagsMatchParams: every parameter of sampling.Params with a flag is
// a flag of run, chat and serve's policy flags with the table's default,
// but the host's seed, which is run and chat's turn flag --seed (serve
// has none: a request gives its own).
func TestFlagsMatchParams(t *testing.T) {
	_, cmd := newPolicyFlags(t)
	turn := &cobra.Command{Use: "run"}
	(&turnFlags{}).register(turn)
	for _, p := range sampling.Params {
		if p.Flag == "" {
			continue
		}
		if p.Plugin == sampling.Host {
			assert.Nil(t, cmd.Flags().Lookup(p.Flag), p.Flag)
			f := turn.Flags().Lookup(p.Flag)
			require.NotNil(t, f, p.Flag)
			assert.Equal(t, p.Usage, f.Usage, p.Flag)
			continue
		}
		f := cmd.Flags().Lookup(p.Flag)
		require.NotNil(t, f, p.Flag)
		switch {
		case p.Number():
			v, err := strconv.ParseFloat(f.DefValue, 64)
			require.NoError(t, err, p.Flag)
			assert.Equal(t, p.Default, v, p.Flag)
		case p.Type == sampling.Order:
			assert.Equal(t, p.DefaultText, f.DefValue, p.Flag)
		}
		assert.Contains(t, f.Usage, p.Usage, p.Flag)
	}
}

// flagValue is a value of p's range other than its default, as a flag
// argument (and not 0 for DRY, whose 0 is off).
func flagValue(p sampling.Param) float64 {
	for _, v := range []float64{0.25, 0.5, 3, 1, 2} {
		if p.Type == sampling.Int && v != math.Trunc(v) {
			continue
		}
		if p.Range.Contains(v) && v != p.Default {
			return v
		}
	}
	panic("no value in the range of " + p.Key)
}

// TestEveryFlagHasAnEffect: each number flag the user sets reaches its
// plugin's config under the parameter's key; one below its range is a
// usage error naming the flag.
func TestEveryFlagHasAnEffect(t *testing.T) {
	for _, p := range sampling.Params {
		if !p.Number() || p.Flag == "" {
			continue
		}
		t.Run(p.Flag, func(t *testing.T) {
			v := flagValue(p)
			args := []string{"--" + p.Flag, strconv.FormatFloat(v, 'g', -1, 64)}
			if p.Plugin == sampling.DRY && p.Key != "dry_multiplier" {
				args = append(args, "--dry-multiplier", "0.8")
			}
			pf, cmd := newPolicyFlags(t, args...)
			var cfg []byte
			var err error
			if p.Plugin == sampling.DRY {
				cfg, err = pf.dryConfig(cmd.Flags())
			} else {
				cfg, err = pf.samplerConfigJSON(cmd.Flags(), 100)
			}
			require.NoError(t, err)
			var got map[string]float64
			require.NoError(t, json.Unmarshal(cfg, &got), string(cfg))
			assert.Equal(t, v, got[p.Key], string(cfg))

			bad := p.Range.Min - 2
			if p.Key == "mirostat" {
				bad = 3
			}
			args[1] = strconv.FormatFloat(bad, 'g', -1, 64)
			pf, cmd = newPolicyFlags(t, args...)
			if p.Plugin == sampling.DRY {
				_, err = pf.dryConfig(cmd.Flags())
			} else {
				_, err = pf.samplerConfigJSON(cmd.Flags(), 100)
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), "--"+p.Flag)
			var ce *cmdError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, exitUsage, ce.code)
		})
	}
}
