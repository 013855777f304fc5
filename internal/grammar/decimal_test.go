package grammar_test

import (
	"fmt"
	"math/big"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/internal/grammar"
)

// TestDecimalBounds: a number schema with non-integer bounds accepts
// exactly the numbers in range written without an exponent (and not as
// -0), against big.Rat, for every pair of bounds from a table, each
// inclusive, exclusive or absent, on decimal strings around them.
func TestDecimalBounds(t *testing.T) {
	bounds := []string{"-2", "-1.5", "-0.25", "0", "0.1", "0.25", "0.205", "1", "1.05", "3.7", "10", "12.5"}
	var inputs []string
	for _, i := range []string{"0", "1", "2", "3", "9", "10", "11", "12", "13"} {
		inputs = append(inputs, i)
		for _, f := range []string{"0", "00", "05", "1", "10", "2", "205", "2049", "2051", "25", "250", "26", "5", "50", "7", "699", "7000001", "9"} {
			inputs = append(inputs, i+"."+f)
		}
	}
	for _, in := range inputs[:len(inputs):len(inputs)] {
		inputs = append(inputs, "-"+in)
	}
	inputs = append(inputs, "1e0", "2.5E-1", "01", "1.", ".5", "-", "")
	v, eog := byteVocab(t)
	type side struct {
		kw, val string
	}
	var los, his []side
	los, his = append(los, side{}), append(his, side{})
	for _, b := range bounds {
		los = append(los, side{"minimum", b}, side{"exclusiveMinimum", b})
		his = append(his, side{"maximum", b}, side{"exclusiveMaximum", b})
	}
	for _, lo := range los {
		for _, hi := range his {
			var kws []string
			if lo.kw != "" {
				kws = append(kws, fmt.Sprintf("%q:%s", lo.kw, lo.val))
			}
			if hi.kw != "" {
				kws = append(kws, fmt.Sprintf("%q:%s", hi.kw, hi.val))
			}
			schema := `{"type":"number"` + strings.Join(append([]string{""}, kws...), ",") + `}`
			src, err := grammar.FromJSONSchema([]byte(schema))
			if err != nil {
				require.ErrorIs(t, err, grammar.ErrUnsupported, schema)
				require.Contains(t, err.Error(), "no number in range", schema)
				continue
			}
			g, err := grammar.Compile(src)
			require.NoError(t, err, schema)
			for _, in := range inputs {
				m := grammar.NewMatcher(g, v)
				err := m.AcceptBytes([]byte(in))
				if err == nil {
					err = m.Accept(eog)
				}
				accepted := err == nil
				r, isNum := new(big.Rat).SetString(in)
				isNum = isNum && in != "" && !strings.HasPrefix(strings.TrimPrefix(in, "-"), ".") && !strings.HasSuffix(in, ".") &&
					!(strings.HasPrefix(strings.TrimPrefix(in, "-"), "0") && len(strings.TrimPrefix(in, "-")) > 1 && strings.TrimPrefix(in, "-")[1] != '.')
				inRange := isNum
				if isNum && lo.kw != "" {
					c := r.Cmp(rat(lo.val))
					inRange = inRange && (c > 0 || c == 0 && lo.kw == "minimum")
				}
				if isNum && hi.kw != "" {
					c := r.Cmp(rat(hi.val))
					inRange = inRange && (c < 0 || c == 0 && hi.kw == "maximum")
				}
				if accepted {
					require.True(t, inRange, "%s accepts %q", schema, in)
				}
				written := !strings.ContainsAny(in, "eE") && !(strings.HasPrefix(in, "-") && r != nil && r.Sign() == 0)
				if inRange && written {
					require.True(t, accepted, "%s rejects %q", schema, in)
				}
			}
		}
	}
}

func rat(s string) *big.Rat { r, _ := new(big.Rat).SetString(s); return r }
