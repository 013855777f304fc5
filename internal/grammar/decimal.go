package grammar

import (
	"math/big"
	"strings"
)

// Non-integer bounds on numbers. The numbers in a decimal range are
// written as a language of digit strings, exactly: a value n + 0.F (n
// the integer part, F the fraction's digits) is in range when n is
// strictly between the bounds' integer parts, or equals one of them and
// F compares right against that bound's fraction digit by digit (a
// regular language: a common prefix, then one digit above or below the
// bound's, then any digits). The grammar writes no exponent and no "-0":
// other serializations of the same values (1e-1, -0.0) are refused, as
// the engine's grammars may be tighter than the schema, never looser.

// maxFracDigits bounds a bound's fraction digits (1e-400 would need 400).
const maxFracDigits = 40

// decimalRange is the language of the numbers in the range, "" when the
// range is empty, false when a bound has more than maxFracDigits fraction
// digits or an integer part past ±1e18.
func decimalRange(lo, hi *big.Rat, loEx, hiEx, hasLo, hasHi bool) (string, bool) {
	var alts []string
	zero := new(big.Rat)
	// negative values: "-" and a magnitude in (max(-hi, 0), -lo]
	if !hasLo || lo.Sign() < 0 {
		a, aEx := zero, true
		if hasHi && hi.Sign() < 0 {
			a, aEx = new(big.Rat).Neg(hi), hiEx
		}
		var b *big.Rat
		if hasLo {
			b = new(big.Rat).Neg(lo)
		}
		e, ok := nonNegRange(a, aEx, b, loEx)
		if !ok {
			return "", false
		}
		if e != "" {
			alts = append(alts, `"-" `+e)
		}
	}
	// non-negative values
	if !hasHi || hi.Sign() > 0 || hi.Sign() == 0 && !hiEx {
		a, aEx := zero, false
		if hasLo && lo.Sign() >= 0 {
			a, aEx = lo, loEx
		}
		var b *big.Rat
		if hasHi {
			b = hi
		}
		e, ok := nonNegRange(a, aEx, b, hiEx)
		if !ok {
			return "", false
		}
		if e != "" {
			alts = append(alts, e)
		}
	}
	return strings.Join(alts, " | "), true
}

// splitDecimal is r >= 0 as its integer part and its fraction's digits
// (no trailing zeros); false past the limits.
func splitDecimal(r *big.Rat) (int64, string, bool) {
	n := new(big.Int).Quo(r.Num(), r.Denom())
	if !n.IsInt64() || n.Int64() > 1e18 {
		return 0, "", false
	}
	f := new(big.Rat).Sub(r, new(big.Rat).SetInt(n))
	var digits []byte
	ten := big.NewRat(10, 1)
	for f.Sign() != 0 {
		if len(digits) == maxFracDigits {
			return 0, "", false
		}
		f.Mul(f, ten)
		d := new(big.Int).Quo(f.Num(), f.Denom())
		digits = append(digits, byte('0'+d.Int64()))
		f.Sub(f, new(big.Rat).SetInt(d))
	}
	return n.Int64(), string(digits), true
}

// nonNegRange is the language of the values v >= 0 with a <= v (a < v
// with aEx) and v <= b (v < b with bEx; b nil: unbounded), written
// n ("." F)?; "" when there is none.
func nonNegRange(a *big.Rat, aEx bool, b *big.Rat, bEx bool) (string, bool) {
	if b != nil {
		if c := a.Cmp(b); c > 0 || c == 0 && (aEx || bEx) {
			return "", true
		}
	}
	na, fa, ok := splitDecimal(a)
	if !ok {
		return "", false
	}
	anyFrac := `( "." [0-9]+ )?`
	if b == nil {
		alts := []string{natStr(na) + " " + fracGE(fa, aEx), natRange(na+1, 0, false) + " " + anyFrac}
		return "( " + strings.Join(alts, " | ") + " )", true
	}
	nb, fb, ok := splitDecimal(b)
	if !ok {
		return "", false
	}
	if na == nb {
		return natStr(na) + " " + fracBetween(fa, aEx, fb, bEx), true
	}
	alts := []string{natStr(na) + " " + fracGE(fa, aEx)}
	if nb-na > 1 {
		alts = append(alts, natRange(na+1, nb-1, true)+" "+anyFrac)
	}
	if le := fracLE(fb, bEx); le != "" {
		alts = append(alts, natStr(nb)+" "+le)
	}
	return "( " + strings.Join(alts, " | ") + " )", true
}

func natStr(n int64) string { return `"` + big.NewInt(n).String() + `"` }

// digitClass is [lo-hi] over digits ("" when lo > hi).
func digitClass(lo, hi byte) string {
	if lo > hi {
		return ""
	}
	if lo == hi {
		return `"` + string(lo) + `"`
	}
	return "[" + string(lo) + "-" + string(hi) + "]"
}

// fracGE: the optional fraction ("" or "." digits) of value >= 0.d (> with ex).
func fracGE(d string, ex bool) string {
	if d == "" && !ex {
		return `( "." [0-9]+ )?`
	}
	return `"." ` + geDigits(d, ex)
}

// geDigits: digit strings s (at least one digit) with 0.s >= 0.d (> with ex).
func geDigits(d string, ex bool) string {
	if d == "" {
		if ex {
			return `"0"* [1-9] [0-9]*`
		}
		return `[0-9]+`
	}
	var alts []string
	if c := digitClass(d[0]+1, '9'); c != "" {
		alts = append(alts, c+" [0-9]*")
	}
	rest := `""`
	if len(d) > 1 || ex {
		rest = geDigits(d[1:], ex)
	} else {
		rest = "[0-9]*"
	}
	alts = append(alts, `"`+d[:1]+`" `+rest)
	return "( " + strings.Join(alts, " | ") + " )"
}

// fracLE: the optional fraction of value <= 0.d (< with ex); "" when none.
func fracLE(d string, ex bool) string {
	if d == "" {
		if ex {
			return ""
		}
		return `( "." "0"+ )?`
	}
	return `( "." ` + leDigits(d, ex) + ` )?`
}

// leDigits: digit strings s (at least one digit) with 0.s <= 0.d (< with
// ex), d not empty.
func leDigits(d string, ex bool) string {
	var alts []string
	if c := digitClass('0', d[0]-1); c != "" {
		alts = append(alts, c+" [0-9]*")
	}
	switch {
	case len(d) > 1:
		alts = append(alts, `"`+d[:1]+`" `+leDigitsOpt(d[1:], ex))
	case !ex:
		alts = append(alts, `"`+d[:1]+`" "0"*`)
	}
	return "( " + strings.Join(alts, " | ") + " )"
}

// leDigitsOpt: like leDigits, the empty string included (equal so far,
// and d's rest is above zero).
func leDigitsOpt(d string, ex bool) string {
	return "( " + leDigits(d, ex) + ` | "" )`
}

// fracBetween: the optional fraction of 0.fa <= value <= 0.fb (strict
// with the flags), fa < fb or equal and both inclusive.
func fracBetween(fa string, aEx bool, fb string, bEx bool) string {
	n := max(len(fa), len(fb))
	pa, pb := fa+strings.Repeat("0", n-len(fa)), fb+strings.Repeat("0", n-len(fb))
	if pa == pb { // the one value n.fa
		if fa == "" {
			return `( "." "0"+ )?`
		}
		return `"." "` + fa + `" "0"*`
	}
	i := 0
	for pa[i] == pb[i] {
		i++
	}
	prefix := pa[:i]
	ra, rb := strings.TrimRight(pa[i+1:], "0"), strings.TrimRight(pb[i+1:], "0")
	// after the prefix: pa[i] then >= ra, or a digit strictly between,
	// or pb[i] then <= rb
	var alts []string
	alts = append(alts, `"`+pa[i:i+1]+`" `+geTail(ra, aEx))
	if c := digitClass(pa[i]+1, pb[i]-1); c != "" {
		alts = append(alts, c+" [0-9]*")
	}
	if t := leTail(rb, bEx); t != "" {
		alts = append(alts, `"`+pb[i:i+1]+`" `+t)
	}
	body := "( " + strings.Join(alts, " | ") + " )"
	if prefix != "" {
		body = `"` + prefix + `" ` + body
	}
	frac := `"." ` + body
	// a fraction that ends inside the common prefix, after j digits, is
	// n.prefix[:j], at most 0.pa: in range where pa has only zeros past j
	if !aEx {
		j0 := max(len(strings.TrimRight(pa, "0")), 1)
		for j := j0; j <= i; j++ {
			frac += ` | "." "` + prefix[:j] + `"`
		}
		frac = "( " + frac + " )"
	}
	if fa == "" && !aEx { // value n itself
		return "( " + frac + ` )?`
	}
	return frac
}

// geTail: digits (maybe none) s with 0.s >= 0.d (> with ex).
func geTail(d string, ex bool) string {
	if d == "" {
		if ex {
			return `"0"* [1-9] [0-9]*`
		}
		return "[0-9]*"
	}
	return geDigits(d, ex)
}

// leTail: digits (maybe none) s with 0.s <= 0.d (< with ex); "" when none.
func leTail(d string, ex bool) string {
	if d == "" {
		if ex {
			return ""
		}
		return `"0"*`
	}
	return leDigitsOpt(d, ex)
}
