package tokenizer

import "unicode"

// cpClass is the coarse Unicode class the pre-tokenizers branch on.
type cpClass uint8

const (
	// classNone marks a position outside the current word (no code point).
	classNone cpClass = iota
	classLetter
	classNumber
	classSpace // White_Space property
	classMark  // \p{M}, told apart only by the qwen35 pre-tokenizer
	classOther // any other code point, assigned or not
)

// unicode151Letters are the letters Unicode 15.1 assigned that Go's unicode
// tables (Unicode 15.0) do not yet know. llama.cpp's tables are generated from
// Unicode 15.1, so this keeps the two in step. The symbols 15.1 added
// (U+2FFC..U+2FFF, U+31EF) need no table: a symbol is classOther, as an
// unassigned code point is.
var unicode151Letters = &unicode.RangeTable{R32: []unicode.Range32{{Lo: 0x2EBF0, Hi: 0x2EE5D, Stride: 1}}}

// asciiClass is the class of each code point below 0x80.
var asciiClass = func() (t [128]cpClass) {
	for r := rune(0); r < 128; r++ {
		t[r] = classOfSlow(r)
	}
	return t
}()

func classOfSlow(r rune) cpClass {
	switch {
	case unicode.Is(unicode.White_Space, r):
		return classSpace
	case unicode.IsLetter(r) || unicode.Is(unicode151Letters, r):
		return classLetter
	case unicode.IsNumber(r):
		return classNumber
	case unicode.IsMark(r):
		return classMark
	}
	return classOther
}

// classOf returns the class of code point r. Whitespace wins over the
// general category (U+0085 and U+00A0 are whitespace, not control/space).
func classOf(r rune) cpClass {
	if r >= 0 && r < 128 {
		return asciiClass[r]
	}
	return classOfSlow(r)
}

// decodeRune decodes one code point from s the way llama.cpp does: the
// length comes from the lead byte's high bits, the continuation bytes must
// be 10xxxxxx, and nothing else is checked (overlong forms and surrogates
// pass). An invalid sequence yields U+FFFD and consumes one byte; a code
// point beyond U+10FFFF is also reported as U+FFFD, consuming its bytes.
func decodeRune(s string) (r rune, size int) {
	c := s[0]
	switch {
	case c < 0x80:
		return rune(c), 1
	case c < 0xC0:
		return 0xFFFD, 1
	case c < 0xE0:
		if len(s) < 2 || s[1]&0xC0 != 0x80 {
			return 0xFFFD, 1
		}
		return rune(c&0x1F)<<6 | rune(s[1]&0x3F), 2
	case c < 0xF0:
		if len(s) < 3 || s[1]&0xC0 != 0x80 || s[2]&0xC0 != 0x80 {
			return 0xFFFD, 1
		}
		return rune(c&0x0F)<<12 | rune(s[1]&0x3F)<<6 | rune(s[2]&0x3F), 3
	case c < 0xF8:
		if len(s) < 4 || s[1]&0xC0 != 0x80 || s[2]&0xC0 != 0x80 || s[3]&0xC0 != 0x80 {
			return 0xFFFD, 1
		}
		r = rune(c&0x07)<<18 | rune(s[1]&0x3F)<<12 | rune(s[2]&0x3F)<<6 | rune(s[3]&0x3F)
		if r > 0x10FFFF {
			return 0xFFFD, 4
		}
		return r, 4
	}
	return 0xFFFD, 1
}

// appendRune appends the UTF-8 encoding of r without Go's surrogate
// replacement, so that a surrogate decoded by decodeRune round-trips.
func appendRune(b []byte, r rune) []byte {
	switch {
	case r < 0x80:
		return append(b, byte(r))
	case r < 0x800:
		return append(b, 0xC0|byte(r>>6), 0x80|byte(r)&0x3F)
	case r < 0x10000:
		return append(b, 0xE0|byte(r>>12), 0x80|byte(r>>6)&0x3F, 0x80|byte(r)&0x3F)
	}
	return append(b, 0xF0|byte(r>>18), 0x80|byte(r>>12)&0x3F, 0x80|byte(r>>6)&0x3F, 0x80|byte(r)&0x3F)
}

// utf8SeqLen is the sequence length a lead byte announces (1 for
// continuation and invalid bytes), as SentencePiece splitting uses it.
func utf8SeqLen(c byte) int {
	switch c >> 4 {
	case 0xC, 0xD:
		return 2
	case 0xE:
		return 3
	case 0xF:
		return 4
	}
	return 1
}
