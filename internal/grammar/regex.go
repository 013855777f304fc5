package grammar

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxRegexLen caps a pattern's length in bytes.
const maxRegexLen = 4096

// regexToGBNF translates an ECMAScript regular expression (the JSON
// Schema pattern dialect, a subset: literals, classes, ., \d \w \s and
// their negations, groups, alternation, greedy or lazy quantifiers, ^ and
// $ at the ends of a top-level alternative) into a GBNF expression over the characters
// of a JSON string's contents as this package serializes them (the
// characters " and \ and control characters escaped). An unanchored side
// allows any characters there, as pattern matching finds the pattern
// anywhere (each top-level alternative on its own: ^a|b$ is a string that
// starts with a or ends with b). Lookarounds, backreferences and anchors elsewhere are
// ErrUnsupported.
func regexToGBNF(pattern string) (string, error) {
	if len(pattern) > maxRegexLen {
		return "", errorf("%w: pattern longer than %d bytes", ErrTooLarge, maxRegexLen)
	}
	rp := &regexParser{src: pattern}
	// each top-level alternative has anchors of its own: ^a|b$ is a
	// string starting with a, or one ending with b
	any := "json-char*"
	var alts []string
	for {
		start := rp.pos < len(rp.src) && rp.src[rp.pos] == '^'
		if start {
			rp.pos++
		}
		expr, err := rp.sequence(0)
		if err != nil {
			return "", err
		}
		end := rp.pos < len(rp.src) && rp.src[rp.pos] == '$'
		if end {
			rp.pos++
		}
		if !start {
			expr = any + " " + expr
		}
		if !end {
			expr = expr + " " + any
		}
		alts = append(alts, "("+expr+")")
		if rp.pos < len(rp.src) && rp.src[rp.pos] == '|' {
			rp.pos++
			continue
		}
		break
	}
	if rp.pos != len(rp.src) {
		return "", errorf("%w: pattern %q: unexpected %q at offset %d", ErrUnsupported, pattern, rp.src[rp.pos], rp.pos)
	}
	return "(" + strings.Join(alts, " | ") + ")", nil
}

type regexParser struct {
	src string
	pos int
}

func (r *regexParser) errf(format string, a ...any) error {
	return errorf("%w: pattern %q at offset %d: %s", ErrUnsupported, r.src, r.pos, sprintf(format, a...))
}

func (r *regexParser) alternation(depth int) (string, error) {
	if depth > 64 {
		return "", r.errf("groups nested too deep")
	}
	var alts []string
	for {
		seq, err := r.sequence(depth)
		if err != nil {
			return "", err
		}
		alts = append(alts, seq)
		if r.pos < len(r.src) && r.src[r.pos] == '|' {
			r.pos++
			continue
		}
		break
	}
	return "(" + strings.Join(alts, " | ") + ")", nil
}

func (r *regexParser) sequence(depth int) (string, error) {
	var parts []string
	for r.pos < len(r.src) {
		c := r.src[r.pos]
		var atom string
		switch {
		case c == '|' || c == ')':
			return joinSeq(parts), nil
		case c == '$':
			if r.pos == len(r.src)-1 || depth == 0 && r.src[r.pos+1] == '|' {
				return joinSeq(parts), nil
			}
			return "", r.errf("$ before the end")
		case c == '^':
			return "", r.errf("^ after the start")
		case c == '(':
			r.pos++
			if strings.HasPrefix(r.src[r.pos:], "?:") {
				r.pos += 2
			} else if strings.HasPrefix(r.src[r.pos:], "?") {
				return "", r.errf("lookaround or named group")
			}
			inner, err := r.alternation(depth + 1)
			if err != nil {
				return "", err
			}
			if r.pos >= len(r.src) || r.src[r.pos] != ')' {
				return "", r.errf("missing )")
			}
			r.pos++
			atom = inner
		case c == '[':
			a, err := r.class()
			if err != nil {
				return "", err
			}
			atom = a
		case c == '.':
			r.pos++
			atom = classExpr(normalize([]runeRange{{'\n', '\n'}, {'\r', '\r'}, {0x2028, 0x2029}}, true))
		case c == '\\':
			ranges, neg, lit, err := r.escape(false)
			if err != nil {
				return "", err
			}
			if ranges != nil {
				atom = classExpr(normalize(ranges, neg))
			} else {
				atom = charExpr(lit)
			}
		case c == '*' || c == '+' || c == '?' || c == '{' && r.isQuantifier():
			return "", r.errf("quantifier with nothing to repeat")
		default:
			ch, size := utf8.DecodeRuneInString(r.src[r.pos:])
			r.pos += size
			atom = charExpr(ch)
		}
		q, err := r.quantifier()
		if err != nil {
			return "", err
		}
		parts = append(parts, atom+q)
	}
	return joinSeq(parts), nil
}

func joinSeq(parts []string) string {
	if len(parts) == 0 {
		return `""`
	}
	return strings.Join(parts, " ")
}

func (r *regexParser) isQuantifier() bool {
	i := r.pos + 1
	j := i
	for j < len(r.src) && (r.src[j] >= '0' && r.src[j] <= '9' || r.src[j] == ',') {
		j++
	}
	return j > i && j < len(r.src) && r.src[j] == '}' && r.src[i] != ','
}

func (r *regexParser) quantifier() (string, error) {
	if r.pos >= len(r.src) {
		return "", nil
	}
	var q string
	switch c := r.src[r.pos]; {
	case c == '*' || c == '+' || c == '?':
		q = string(c)
		r.pos++
	case c == '{' && r.isQuantifier():
		end := strings.IndexByte(r.src[r.pos:], '}') + r.pos
		body := r.src[r.pos+1 : end]
		lo, hi, comma := body, "", false
		if i := strings.IndexByte(body, ','); i >= 0 {
			lo, hi, comma = body[:i], body[i+1:], true
		}
		m, err := strconv.Atoi(lo)
		if err != nil || m > maxRepetition {
			return "", r.errf("repetition {%s}", body)
		}
		if hi != "" {
			n, err := strconv.Atoi(hi)
			if err != nil || n > maxRepetition || n < m {
				return "", r.errf("repetition {%s}", body)
			}
		}
		if comma {
			q = "{" + lo + "," + hi + "}"
		} else {
			q = "{" + lo + "}"
		}
		r.pos = end + 1
	default:
		return "", nil
	}
	if r.pos < len(r.src) && r.src[r.pos] == '?' { // lazy: the same language
		r.pos++
	}
	if r.pos < len(r.src) && (r.src[r.pos] == '*' || r.src[r.pos] == '+' || r.src[r.pos] == '?' || r.src[r.pos] == '{' && r.isQuantifier()) {
		return "", r.errf("quantifier after a quantifier")
	}
	return q, nil
}

var (
	digitRanges = []runeRange{{'0', '9'}}
	wordRanges  = []runeRange{{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}}
	spaceRanges = []runeRange{{'\t', '\r'}, {' ', ' '}, {0xA0, 0xA0}, {0x1680, 0x1680}, {0x2000, 0x200A}, {0x2028, 0x2029}, {0x202F, 0x202F}, {0x205F, 0x205F}, {0x3000, 0x3000}, {0xFEFF, 0xFEFF}}
)

// escape reads a backslash escape: a class (ranges, neg) or a literal.
func (r *regexParser) escape(inClass bool) ([]runeRange, bool, rune, error) {
	r.pos++
	if r.pos >= len(r.src) {
		return nil, false, 0, r.errf("trailing backslash")
	}
	c := r.src[r.pos]
	r.pos++
	switch c {
	case 'd':
		return digitRanges, false, 0, nil
	case 'D':
		return digitRanges, true, 0, nil
	case 'w':
		return wordRanges, false, 0, nil
	case 'W':
		return wordRanges, true, 0, nil
	case 's':
		return spaceRanges, false, 0, nil
	case 'S':
		return spaceRanges, true, 0, nil
	case 'n':
		return nil, false, '\n', nil
	case 'r':
		return nil, false, '\r', nil
	case 't':
		return nil, false, '\t', nil
	case 'f':
		return nil, false, '\f', nil
	case 'v':
		return nil, false, '\v', nil
	case '0':
		return nil, false, 0, nil
	case 'x', 'u':
		n := 2
		if c == 'u' {
			n = 4
		}
		if r.pos+n > len(r.src) {
			return nil, false, 0, r.errf("short \\%c escape", c)
		}
		v, err := strconv.ParseUint(r.src[r.pos:r.pos+n], 16, 32)
		if err != nil {
			return nil, false, 0, r.errf("bad \\%c escape", c)
		}
		r.pos += n
		return nil, false, rune(v), nil
	case 'b':
		if inClass {
			return nil, false, '\b', nil
		}
		return nil, false, 0, r.errf("word boundary \\b")
	}
	if c >= '1' && c <= '9' || c == 'B' || c == 'k' || c == 'p' || c == 'P' || c == 'c' {
		return nil, false, 0, r.errf("escape \\%c", c)
	}
	if c >= 0x80 || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
		return nil, false, 0, r.errf("escape \\%c", c)
	}
	return nil, false, rune(c), nil
}

func (r *regexParser) class() (string, error) {
	r.pos++
	neg := false
	if r.pos < len(r.src) && r.src[r.pos] == '^' {
		neg = true
		r.pos++
	}
	var ranges []runeRange
	first := true
	for {
		if r.pos >= len(r.src) {
			return "", r.errf("missing ]")
		}
		if r.src[r.pos] == ']' && !first {
			r.pos++
			break
		}
		if r.src[r.pos] == ']' && first {
			// ECMAScript: [] matches nothing, [^] anything
			r.pos++
			if neg {
				return classExpr(normalize(nil, true)), nil
			}
			return "", r.errf("empty class []")
		}
		first = false
		lo, isClass, err := r.classAtom(&ranges)
		if err != nil {
			return "", err
		}
		if isClass {
			continue
		}
		if r.pos+1 < len(r.src) && r.src[r.pos] == '-' && r.src[r.pos+1] != ']' {
			r.pos++
			var tmp []runeRange
			hi, isClass, err := r.classAtom(&tmp)
			if err != nil {
				return "", err
			}
			if isClass || hi < lo {
				return "", r.errf("bad class range")
			}
			ranges = append(ranges, runeRange{lo, hi})
			continue
		}
		ranges = append(ranges, runeRange{lo, lo})
	}
	rs := normalize(ranges, neg)
	if len(rs) == 0 {
		return "", r.errf("class matches nothing")
	}
	return classExpr(rs), nil
}

// classAtom reads one class member: a character, or a class escape whose
// ranges it appends (isClass).
func (r *regexParser) classAtom(ranges *[]runeRange) (rune, bool, error) {
	if r.src[r.pos] == '\\' {
		rs, neg, lit, err := r.escape(true)
		if err != nil {
			return 0, false, err
		}
		if rs != nil {
			*ranges = append(*ranges, normalize(rs, neg)...)
			return 0, true, nil
		}
		return lit, false, nil
	}
	if r.src[r.pos] == '[' && r.pos+1 < len(r.src) && r.src[r.pos+1] == ':' {
		return 0, false, r.errf("POSIX class")
	}
	ch, size := utf8.DecodeRuneInString(r.src[r.pos:])
	r.pos += size
	return ch, false, nil
}

// charExpr is the GBNF for one character as it appears inside a JSON
// string this package serializes.
func charExpr(c rune) string {
	if e, ok := jsonEscape(c); ok {
		return gbnfLiteral(e)
	}
	return gbnfLiteral(string(c))
}

// jsonEscape is how a character needing an escape inside a JSON string is
// written (\b and \f also have \u forms; classExpr allows both).
func jsonEscape(c rune) (string, bool) {
	switch c {
	case '"':
		return `\"`, true
	case '\\':
		return `\\`, true
	case '\n':
		return `\n`, true
	case '\r':
		return `\r`, true
	case '\t':
		return `\t`, true
	case '\b':
		return `\b`, true
	case '\f':
		return `\f`, true
	}
	if c < 0x20 {
		return sprintf(`\u%04x`, c), true
	}
	return "", false
}

// classExpr is the GBNF for a normalized set of characters inside a JSON
// string: the characters written as they are in one class, each one that
// needs an escape as its escape.
func classExpr(rs []runeRange) string {
	var plain []runeRange
	var alts []string
	for _, r := range rs {
		for c := r.lo; c <= r.hi && c < 0x20; c++ {
			alts = append(alts, charAlts(c)...)
		}
		lo := max(r.lo, 0x20)
		for _, special := range []rune{'"', '\\'} {
			if lo <= special && special <= r.hi {
				if lo < special {
					plain = append(plain, runeRange{lo, special - 1})
				}
				alts = append(alts, charAlts(special)...)
				lo = special + 1
			}
		}
		if lo <= r.hi {
			plain = append(plain, runeRange{lo, r.hi})
		}
	}
	if len(plain) > 0 {
		var b strings.Builder
		b.WriteByte('[')
		for _, r := range plain {
			b.WriteString(classChar(r.lo))
			if r.hi > r.lo {
				b.WriteByte('-')
				b.WriteString(classChar(r.hi))
			}
		}
		b.WriteByte(']')
		alts = append([]string{b.String()}, alts...)
	}
	if len(alts) == 1 {
		return alts[0]
	}
	return "(" + strings.Join(alts, " | ") + ")"
}

func charAlts(c rune) []string {
	e, _ := jsonEscape(c)
	out := []string{gbnfLiteral(e)}
	if c == '\b' || c == '\f' {
		out = append(out, gbnfLiteral(sprintf(`\u%04x`, c)))
	}
	return out
}

// classChar writes c for use inside a GBNF [...] class.
func classChar(c rune) string {
	switch {
	case c == '\\' || c == ']' || c == '[' || c == '-' || c == '"':
		return `\` + string(c)
	case c < 0x20 || c == 0x7F || c == '^':
		return sprintf(`\x%02X`, c)
	case c >= 0x80:
		return sprintf(`\U%08X`, c)
	}
	return string(c)
}

// gbnfLiteral quotes s as a GBNF string literal.
func gbnfLiteral(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, c := range s {
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteRune(c)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\t':
			b.WriteString(`\t`)
		case c < 0x20 || c == 0x7F:
			b.WriteString(sprintf(`\x%02X`, c))
		default:
			b.WriteRune(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}
