package grammar

import (
	"slices"
	"unicode/utf8"
)

// byteSet is a set of byte values.
type byteSet [4]uint64

func (s *byteSet) add(lo, hi byte) {
	for b := int(lo); b <= int(hi); b++ {
		s[b>>6] |= 1 << (b & 63)
	}
}

func (s *byteSet) has(b byte) bool { return s[b>>6]&(1<<(b&63)) != 0 }

// byteRange is one position of a UTF-8 sequence pattern.
type byteRange struct{ lo, hi byte }

// utf8Seqs turns code point ranges into UTF-8 byte patterns: a byte string
// is in the union of the patterns exactly when it encodes a code point in
// one of the ranges. Surrogates (U+D800–U+DFFF) are never matched.
func utf8Seqs(ranges []runeRange) [][]byteRange {
	var out [][]byteRange
	for _, r := range ranges {
		lo, hi := r.lo, min(r.hi, utf8.MaxRune)
		// cut out the surrogates
		if lo <= 0xDFFF && hi >= 0xD800 {
			if lo < 0xD800 {
				out = splitUTF8(lo, 0xD7FF, out)
			}
			if hi > 0xDFFF {
				out = splitUTF8(0xE000, hi, out)
			}
			continue
		}
		if lo <= hi {
			out = splitUTF8(lo, hi, out)
		}
	}
	return out
}

func splitUTF8(lo, hi rune, out [][]byteRange) [][]byteRange {
	for _, b := range []rune{0x7F, 0x7FF, 0xFFFF} {
		if lo <= b && b < hi {
			out = splitUTF8(lo, b, out)
			return splitUTF8(b+1, hi, out)
		}
	}
	if hi <= 0x7F {
		return append(out, []byteRange{{byte(lo), byte(hi)}})
	}
	for i := 1; i < 4; i++ {
		m := rune(1)<<(6*i) - 1
		if lo&^m != hi&^m {
			if lo&m != 0 {
				out = splitUTF8(lo, lo|m, out)
				return splitUTF8((lo|m)+1, hi, out)
			}
			if hi&m != m {
				out = splitUTF8(lo, (hi&^m)-1, out)
				return splitUTF8(hi&^m, hi, out)
			}
		}
	}
	var a, b [4]byte
	n := utf8.EncodeRune(a[:], lo)
	utf8.EncodeRune(b[:], hi)
	seq := make([]byteRange, n)
	for i := range seq {
		seq[i] = byteRange{a[i], b[i]}
	}
	return append(out, seq)
}

// normalize sorts and merges ranges, complementing them when neg.
func normalize(ranges []runeRange, neg bool) []runeRange {
	rs := slices.Clone(ranges)
	slices.SortFunc(rs, func(a, b runeRange) int { return int(a.lo - b.lo) })
	var merged []runeRange
	for _, r := range rs {
		if n := len(merged); n > 0 && r.lo <= merged[n-1].hi+1 {
			merged[n-1].hi = max(merged[n-1].hi, r.hi)
			continue
		}
		merged = append(merged, r)
	}
	if !neg {
		return merged
	}
	var comp []runeRange
	next := rune(0)
	for _, r := range merged {
		if r.lo > next {
			comp = append(comp, runeRange{next, r.lo - 1})
		}
		next = r.hi + 1
	}
	if next <= utf8.MaxRune {
		comp = append(comp, runeRange{next, utf8.MaxRune})
	}
	return comp
}
