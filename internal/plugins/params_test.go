package plugins_test

import (
	"fmt"
	"math"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/engine/enginetest"
	"github.com/realizar-host/realizar-host/host"
	"github.com/realizar-host/realizar-host/internal/plugins/sampling"
)

// TestStandardRangesFromParams: the C and Go builds of the standard
// sampler take each number parameter at the ends of its sampling.Params
// range and refuse it just outside, with the log line "KEY must be WANT";
// the C build's ranges are its own copy, checked here against the table.
func TestStandardRangesFromParams(t *testing.T) {
	h := newHost(t, host.NewConfig())
	v := enginetest.NewTokenVocab(100, nil)
	for _, p := range sampling.Of(sampling.Standard) {
		if !p.Number() {
			continue
		}
		step := 0.5
		if p.Type == sampling.Int {
			step = 1
		}
		ok := []float64{p.Range.Min + step}
		bad := []float64{p.Range.Min - step}
		if !p.Range.MinOpen {
			ok = append(ok, p.Range.Min)
		} else {
			bad = append(bad, p.Range.Min)
		}
		if !math.IsInf(p.Range.Max, 1) {
			ok = append(ok, p.Range.Max)
			bad = append(bad, p.Range.Max+step)
		}
		if p.Key == "top_n_sigma" {
			bad = []float64{-0.5, -2}
		}
		for _, name := range []string{"standard", "standard-go"} {
			for _, x := range ok {
				cfg := fmt.Sprintf(`{%q: %s}`, p.Key, strconv.FormatFloat(x, 'g', -1, 64))
				s := newSampler(t, v, load(t, h, name, cfg))
				assert.NoError(t, s.Reset(1, []int32{1}), "%s %s", name, cfg)
			}
			for _, x := range bad {
				cfg := fmt.Sprintf(`{%q: %s}`, p.Key, strconv.FormatFloat(x, 'g', -1, 64))
				s := newSampler(t, v, load(t, h, name, cfg))
				err := s.Reset(1, []int32{1})
				require.ErrorIs(t, err, host.ErrBadConfig, "%s %s", name, cfg)
				var pe *host.PluginError
				require.ErrorAs(t, err, &pe)
				assert.Contains(t, pe.LastLog, p.Key+" must be "+p.Want(), "%s %s", name, cfg)
			}
		}
	}
}
