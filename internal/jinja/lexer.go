package jinja

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// tokKind is a lexical token's kind.
type tokKind int

const (
	tData       tokKind = iota // template text between tags
	tVarBegin                  // {{
	tVarEnd                    // }}
	tBlockBegin                // {%
	tBlockEnd                  // %}
	tName
	tString
	tInt
	tFloat
	tOp // an operator or punctuation; val holds it
	tEOF
)

type token struct {
	kind tokKind
	val  string // the text (data, name, operator) or the decoded string literal
	num  any    // int64 or float64 for tInt and tFloat
	line int
}

func (t token) String() string {
	switch t.kind {
	case tData:
		return "template data"
	case tVarBegin:
		return "'{{'"
	case tVarEnd:
		return "'}}'"
	case tBlockBegin:
		return "'{%'"
	case tBlockEnd:
		return "'%}'"
	case tEOF:
		return "end of template"
	case tString:
		return strconv.Quote(t.val)
	}
	return "'" + t.val + "'"
}

// operators, longest first so that "**" wins over "*".
var operators = []string{"//", "**", "==", "!=", ">=", "<=", "+", "-", "/", "*", "%", "~",
	"[", "]", "(", ")", "{", "}", ">", "<", "=", ".", ":", "|", ",", ";"}

// isSpace is Python's str.isspace (what Jinja2's \s and rstrip() match).
func isSpace(r rune) bool { return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f) }

// lexer turns a template into tokens the way Jinja2's lexer does with
// trim_blocks and lstrip_blocks: source newlines are normalized to "\n"
// and one trailing newline is dropped (keep_trailing_newline off); "-" on
// a tag strips the whitespace beside it, "+" keeps it; a block or comment
// tag alone on its line takes the line's indentation (lstrip_blocks) and
// the newline after it (trim_blocks).
type lexer struct {
	src  string
	pos  int
	line int
	toks []token
}

func normalizeSource(src string) string {
	src = strings.ReplaceAll(src, "\r\n", "\n")
	src = strings.ReplaceAll(src, "\r", "\n")
	return strings.TrimSuffix(src, "\n")
}

func lex(src string) ([]token, error) {
	l := &lexer{src: normalizeSource(src), line: 1}
	if err := l.run(); err != nil {
		return nil, err
	}
	return l.toks, nil
}

func (l *lexer) errorf(format string, args ...any) error {
	return &Error{Line: l.line, Msg: fmt.Sprintf(format, args...), Syntax: true}
}

func (l *lexer) emit(kind tokKind, val string, line int) {
	l.toks = append(l.toks, token{kind: kind, val: val, line: line})
}

// nextTag finds the next "{{", "{%" or "{#" at or after from.
func (l *lexer) nextTag(from int) (int, byte) {
	for i := from; i+1 < len(l.src); i++ {
		if l.src[i] == '{' {
			switch c := l.src[i+1]; c {
			case '{', '%', '#':
				return i, c
			}
		}
	}
	return -1, 0
}

func (l *lexer) run() error {
	lineStart := true // the text about to be read starts a line
	for l.pos < len(l.src) {
		at, kind := l.nextTag(l.pos)
		if at < 0 {
			l.data(l.src[l.pos:])
			break
		}
		text := l.src[l.pos:at]
		sign := byte(0)
		if at+2 < len(l.src) && (l.src[at+2] == '-' || l.src[at+2] == '+') {
			sign = l.src[at+2]
		}
		switch {
		case sign == '-':
			text = strings.TrimRightFunc(text, isSpace)
		case sign != '+' && kind != '{':
			lpos := strings.LastIndexByte(text, '\n') + 1
			if lpos > 0 || lineStart {
				rest := text[lpos:]
				if rest != "" && strings.TrimLeftFunc(rest, isSpace) == "" {
					text = text[:lpos]
				}
			}
		}
		l.data(text)
		l.line += strings.Count(l.src[l.pos:at], "\n") - strings.Count(text, "\n")
		l.pos = at + 2
		if sign != 0 {
			l.pos++
		}
		var err error
		switch kind {
		case '#':
			err = l.comment()
		case '%':
			if l.rawBlock() {
				err = l.raw()
			} else {
				l.emit(tBlockBegin, "{%", l.line)
				err = l.tag("%}", tBlockEnd, true)
			}
		case '{':
			l.emit(tVarBegin, "{{", l.line)
			err = l.tag("}}", tVarEnd, false)
		}
		if err != nil {
			return err
		}
		lineStart = l.pos > 0 && l.src[l.pos-1] == '\n'
	}
	l.emit(tEOF, "", l.line)
	return nil
}

func (l *lexer) data(text string) {
	if text != "" {
		l.emit(tData, text, l.line)
		l.line += strings.Count(text, "\n")
	}
}

// closeTag consumes a tag's end at l.pos (end is "%}", "}}" or "#}"),
// with its whitespace control: "-" strips all whitespace after it, "+"
// keeps it, and a block or comment end drops one newline (trim_blocks).
// It reports false when l.pos is not at an end.
func (l *lexer) closeTag(end string, trim bool) bool {
	s := l.src[l.pos:]
	switch {
	case strings.HasPrefix(s, "-"+end):
		l.pos += 1 + len(end)
		for l.pos < len(l.src) {
			r, n := utf8.DecodeRuneInString(l.src[l.pos:])
			if !isSpace(r) {
				break
			}
			if r == '\n' {
				l.line++
			}
			l.pos += n
		}
	case trim && strings.HasPrefix(s, "+"+end):
		l.pos += 1 + len(end)
	case strings.HasPrefix(s, end):
		l.pos += len(end)
		if trim && l.pos < len(l.src) && l.src[l.pos] == '\n' {
			l.pos++
			l.line++
		}
	default:
		return false
	}
	return true
}

func (l *lexer) comment() error {
	start := l.line
	for l.pos < len(l.src) {
		if strings.HasPrefix(l.src[l.pos:], "#}") || strings.HasPrefix(l.src[l.pos:], "-#}") || strings.HasPrefix(l.src[l.pos:], "+#}") {
			if l.closeTag("#}", true) {
				return nil
			}
		}
		if l.src[l.pos] == '\n' {
			l.line++
		}
		l.pos++
	}
	l.line = start
	return l.errorf("the comment is not closed (missing '#}')")
}

// rawBlock reports whether the tag at l.pos is "raw".
func (l *lexer) rawBlock() bool {
	s := strings.TrimLeftFunc(l.src[l.pos:], isSpace)
	if !strings.HasPrefix(s, "raw") {
		return false
	}
	s = strings.TrimLeftFunc(s[3:], isSpace)
	return strings.HasPrefix(s, "%}") || strings.HasPrefix(s, "-%}") || strings.HasPrefix(s, "+%}")
}

// raw emits the text up to {% endraw %} as data.
func (l *lexer) raw() error {
	l.pos += strings.Index(l.src[l.pos:], "raw") + 3
	l.pos += len(l.src[l.pos:]) - len(strings.TrimLeftFunc(l.src[l.pos:], isSpace))
	l.closeTag("%}", false) // Jinja2 trims no newline after {% raw %}
	for i := l.pos; i < len(l.src); i++ {
		if !strings.HasPrefix(l.src[i:], "{%") {
			continue
		}
		j := i + 2
		sign := byte(0)
		if j < len(l.src) && (l.src[j] == '-' || l.src[j] == '+') {
			sign = l.src[j]
			j++
		}
		rest := strings.TrimLeftFunc(l.src[j:], isSpace)
		if !strings.HasPrefix(rest, "endraw") {
			continue
		}
		text := l.src[l.pos:i]
		if sign == '-' {
			text = strings.TrimRightFunc(text, isSpace)
		}
		l.data(text)
		l.line += strings.Count(l.src[l.pos:i], "\n") - strings.Count(text, "\n")
		l.pos = len(l.src) - len(rest) + len("endraw")
		l.pos += len(l.src[l.pos:]) - len(strings.TrimLeftFunc(l.src[l.pos:], isSpace))
		if !l.closeTag("%}", true) {
			return l.errorf("expected '%%}' after endraw")
		}
		return nil
	}
	return l.errorf("the raw block is not closed (missing '{%% endraw %%}')")
}

// tag lexes a tag's contents up to its end.
func (l *lexer) tag(end string, kind tokKind, trim bool) error {
	depth := 0 // brackets open: "}}" inside a dict literal is two braces
	for {
		for l.pos < len(l.src) && isSpace(rune(l.src[l.pos])) {
			if l.src[l.pos] == '\n' {
				l.line++
			}
			l.pos++
		}
		if l.pos >= len(l.src) {
			return l.errorf("unexpected end of template, expected '%s'", end)
		}
		if depth == 0 {
			line := l.line
			if l.closeTag(end, trim) {
				l.emit(kind, end, line)
				return nil
			}
		}
		c := l.src[l.pos]
		switch {
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80:
			start := l.pos
			for l.pos < len(l.src) {
				r, n := utf8.DecodeRuneInString(l.src[l.pos:])
				if r != '_' && !unicode.IsLetter(r) && !unicode.IsDigit(r) {
					break
				}
				l.pos += n
			}
			if l.pos == start {
				return l.errorf("unexpected character %q", l.src[l.pos:l.pos+1])
			}
			l.emit(tName, l.src[start:l.pos], l.line)
		case c >= '0' && c <= '9':
			if err := l.number(); err != nil {
				return err
			}
		case c == '\'' || c == '"':
			if err := l.str(c); err != nil {
				return err
			}
		default:
			op := ""
			for _, o := range operators {
				if strings.HasPrefix(l.src[l.pos:], o) {
					op = o
					break
				}
			}
			if op == "" {
				return l.errorf("unexpected character %q", l.src[l.pos:l.pos+1])
			}
			switch op {
			case "(", "[", "{":
				depth++
			case ")", "]", "}":
				depth--
			}
			l.emit(tOp, op, l.line)
			l.pos += len(op)
		}
	}
}

func (l *lexer) number() error {
	start := l.pos
	digits := func() {
		for l.pos < len(l.src) && (l.src[l.pos] >= '0' && l.src[l.pos] <= '9' || l.src[l.pos] == '_' && l.pos+1 < len(l.src) && l.src[l.pos+1] >= '0' && l.src[l.pos+1] <= '9') {
			l.pos++
		}
	}
	digits()
	isFloat := false
	if l.pos+1 < len(l.src) && l.src[l.pos] == '.' && l.src[l.pos+1] >= '0' && l.src[l.pos+1] <= '9' {
		isFloat = true
		l.pos++
		digits()
	}
	if l.pos < len(l.src) && (l.src[l.pos] == 'e' || l.src[l.pos] == 'E') {
		j := l.pos + 1
		if j < len(l.src) && (l.src[j] == '+' || l.src[j] == '-') {
			j++
		}
		if j < len(l.src) && l.src[j] >= '0' && l.src[j] <= '9' {
			isFloat = true
			l.pos = j
			digits()
		}
	}
	text := strings.ReplaceAll(l.src[start:l.pos], "_", "")
	if isFloat {
		f, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return l.errorf("bad number %q", text)
		}
		l.toks = append(l.toks, token{kind: tFloat, val: text, num: f, line: l.line})
		return nil
	}
	n, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		return l.errorf("integer %s is out of range", text)
	}
	l.toks = append(l.toks, token{kind: tInt, val: text, num: n, line: l.line})
	return nil
}

// str lexes a string literal with Python's escapes (\n, \t, \xNN,
// \uNNNN, \UNNNNNNNN, octal; an unknown escape keeps its backslash).
func (l *lexer) str(quote byte) error {
	line := l.line
	var b strings.Builder
	l.pos++
	for {
		if l.pos >= len(l.src) {
			l.line = line
			return l.errorf("the string literal is not closed")
		}
		c := l.src[l.pos]
		if c == quote {
			l.pos++
			break
		}
		if c == '\n' {
			l.line++
		}
		if c != '\\' || l.pos+1 >= len(l.src) {
			b.WriteByte(c)
			l.pos++
			continue
		}
		e := l.src[l.pos+1]
		l.pos += 2
		switch e {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case '\\', '\'', '"':
			b.WriteByte(e)
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'v':
			b.WriteByte('\v')
		case '\n':
			l.line++ // a line continuation
		case 'x', 'u', 'U':
			n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			if l.pos+n > len(l.src) {
				return l.errorf("truncated \\%c escape", e)
			}
			v, err := strconv.ParseUint(l.src[l.pos:l.pos+n], 16, 32)
			if err != nil || v > unicode.MaxRune {
				return l.errorf("bad \\%c escape", e)
			}
			b.WriteRune(rune(v))
			l.pos += n
		case '0', '1', '2', '3', '4', '5', '6', '7':
			v := int(e - '0')
			for k := 0; k < 2 && l.pos < len(l.src) && l.src[l.pos] >= '0' && l.src[l.pos] <= '7'; k++ {
				v = v*8 + int(l.src[l.pos]-'0')
				l.pos++
			}
			b.WriteRune(rune(v))
		default:
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
	l.toks = append(l.toks, token{kind: tString, val: b.String(), line: line})
	return nil
}
