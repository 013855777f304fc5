package parity_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/tools/llamaref/internal/reftest"
	"github.com/realizar-host/realizar-host/tools/llamaref/ref"
)

func TestScratchPos(t *testing.T) {
	l := reftest.Lib(t)
	for _, ft := range []string{"Q8_0", "F32"} {
		path := stories(ft).path(t, l)
		rm := reftest.Model(t, l, path)
		toks := storyTokens(t, rm)[:40]
		a, err := reftest.Context(t, rm, ref.ContextConfig{NCtx: 512, NBatch: 1}).Logits(toks)
		require.NoError(t, err)
		m := loadOurs(t, path, 1)
		s := m.NewStep()
		line := ""
		for i, tok := range toks {
			got, err := s.Step(tok, i)
			require.NoError(t, err)
			_, ma, mr := compare(got, a[i])
			line += " " + fmtE(ma/math.Max(1, mr))
		}
		t.Logf("%s: %s", ft, line)
	}
}

func fmtE(x float64) string { return strconvE(x) }
