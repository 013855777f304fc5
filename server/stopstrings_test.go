package server

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/engine"
)

func TestStopStrings(t *testing.T) {
	for _, tc := range []struct {
		name   string
		stops  []string
		pieces []string
		want   []engine.Decision
	}{
		{"no match", []string{"END"}, []string{"ab", "cd"},
			[]engine.Decision{{}, {}}},
		{"whole piece", []string{"END"}, []string{"ab", "END"},
			[]engine.Decision{{}, {Action: engine.StopTrim, Trim: 3}}},
		{"inside a piece, bytes after it trimmed too", []string{"END"}, []string{"aENDbc"},
			[]engine.Decision{{Action: engine.StopTrim, Trim: 5}}},
		{"across pieces, held back", []string{"END"}, []string{"xE", "N", "Dyz"},
			[]engine.Decision{{HoldBack: 1}, {HoldBack: 2}, {Action: engine.StopTrim, Trim: 5}}},
		{"partial that fails is released", []string{"END"}, []string{"xEN", "x"},
			[]engine.Decision{{HoldBack: 2}, {}}},
		{"earliest of several", []string{"cd", "bcde"}, []string{"abcdef"},
			[]engine.Decision{{Action: engine.StopTrim, Trim: 5}}},
		{"longest partial held", []string{"ab", "xxab"}, []string{"qxxa"},
			[]engine.Decision{{HoldBack: 3}}},
		{"multi-byte", []string{"é!"}, []string{"caf\xc3", "\xa9", "!"},
			[]engine.Decision{{HoldBack: 1}, {HoldBack: 2}, {Action: engine.StopTrim, Trim: 3}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewStopStrings(tc.stops)
			require.NoError(t, s.Reset())
			for i, p := range tc.pieces {
				d, err := s.Check(0, []byte(p))
				require.NoError(t, err)
				assert.Equal(t, tc.want[i], d, "piece %d %q", i, p)
			}
		})
	}
}

func FuzzStopStrings(f *testing.F) {
	f.Add("END", "xEN", "Dyz")
	f.Add("é", "caf\xc3", "\xa9")
	f.Fuzz(func(t *testing.T, stop, a, b string) {
		if stop == "" {
			return
		}
		s := NewStopStrings([]string{stop})
		text := ""
		for _, p := range []string{a, b} {
			text += p
			d, err := s.Check(0, []byte(p))
			require.NoError(t, err)
			switch d.Action {
			case engine.StopTrim:
				require.LessOrEqual(t, d.Trim, len(text))
				require.Contains(t, text[len(text)-d.Trim:], stop)
				return
			case engine.Continue:
				require.LessOrEqual(t, d.HoldBack, len(text))
				require.NotContains(t, text, stop)
			}
		}
	})
}
