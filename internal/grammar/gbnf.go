package grammar

import (
	"strconv"
	"unicode/utf8"
)

// MaxRepetition is the largest count a {m,n} repetition may name, as in
// llama.cpp (MAX_REPETITION_THRESHOLD).
const maxRepetition = 2000

// maxNesting bounds parenthesis nesting in the parser (recursion depth).
const maxNesting = 256

type nodeKind uint8

const (
	nLit    nodeKind = iota // a string literal: lit
	nClass                  // a character class: ranges, neg
	nRef                    // a rule reference: name
	nGroup                  // a parenthesised group: alts
	nRepeat                 // sub{min,max}; max < 0 is unbounded
)

type runeRange struct{ lo, hi rune }

type node struct {
	kind      nodeKind
	lit       []rune
	ranges    []runeRange
	neg       bool
	name      string
	alts      [][]*node
	sub       *node
	min, max  int
	line, col int
}

// syntax is a parsed GBNF grammar: each rule's alternatives.
type syntax struct {
	rules map[string][][]*node
	order []string
	at    map[string][2]int // where each rule is defined
}

type parser struct {
	src       string
	pos       int
	line, col int // of pos, 1-based
	depth     int
}

// parse reads a GBNF grammar. Errors are *SyntaxError, or wrap
// ErrUndefinedRule or ErrTooLarge.
func parse(src string) (*syntax, error) {
	p := &parser{src: src, line: 1, col: 1}
	s := &syntax{rules: map[string][][]*node{}, at: map[string][2]int{}}
	if err := p.grammar(s); err != nil {
		return nil, err
	}
	if _, ok := s.rules["root"]; !ok {
		e := &RuleError{Line: 1, Col: 1, Rule: "root", Msg: "no root rule: the grammar is empty", Err: ErrUndefinedRule}
		if len(s.order) > 0 {
			first := s.order[0]
			e.Line, e.Col = s.at[first][0], s.at[first][1]
			e.Msg = sprintf("no root rule (the start rule is named root; the first rule here is %q)", first)
		}
		return nil, e
	}
	var check func(alts [][]*node) error
	check = func(alts [][]*node) error {
		for _, seq := range alts {
			for _, n := range seq {
				for n.kind == nRepeat {
					n = n.sub
				}
				switch n.kind {
				case nRef:
					if _, ok := s.rules[n.name]; !ok {
						return &RuleError{Line: n.line, Col: n.col, Rule: n.name, Msg: sprintf("%q is used but not defined", n.name), Err: ErrUndefinedRule}
					}
				case nGroup:
					if err := check(n.alts); err != nil {
						return err
					}
				}
			}
		}
		return nil
	}
	for _, name := range s.order {
		if err := check(s.rules[name]); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (p *parser) errf(format string, a ...any) error {
	return &SyntaxError{Line: p.line, Col: p.col, Msg: sprintf(format, a...)}
}

func (p *parser) peek() byte {
	if p.pos < len(p.src) {
		return p.src[p.pos]
	}
	return 0
}

func (p *parser) eof() bool { return p.pos >= len(p.src) }

// advance moves past n bytes, keeping line and column.
func (p *parser) advance(n int) {
	for i := 0; i < n && p.pos < len(p.src); i++ {
		if p.src[p.pos] == '\n' {
			p.line++
			p.col = 1
		} else {
			p.col++
		}
		p.pos++
	}
}

// space skips blanks and comments, and newlines when newlineOK.
func (p *parser) space(newlineOK bool) {
	for !p.eof() {
		c := p.peek()
		switch {
		case c == ' ' || c == '\t':
			p.advance(1)
		case c == '#':
			for !p.eof() && p.peek() != '\n' && p.peek() != '\r' {
				p.advance(1)
			}
		case newlineOK && (c == '\n' || c == '\r'):
			p.advance(1)
		default:
			return
		}
	}
}

func isWordChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-'
}

func (p *parser) name() (string, error) {
	start := p.pos
	for !p.eof() && isWordChar(p.peek()) {
		p.advance(1)
	}
	if p.pos == start {
		return "", p.errf("expecting a rule name")
	}
	return p.src[start:p.pos], nil
}

func (p *parser) grammar(s *syntax) error {
	p.space(true)
	for !p.eof() {
		line, col := p.line, p.col
		name, err := p.name()
		if err != nil {
			return err
		}
		p.space(false)
		if len(p.src)-p.pos < 3 || p.src[p.pos:p.pos+3] != "::=" {
			return p.errf("expecting ::= after rule name %q", name)
		}
		p.advance(3)
		p.space(true)
		alts, err := p.alternates(false)
		if err != nil {
			return err
		}
		if prev, dup := s.at[name]; dup {
			return &SyntaxError{Line: line, Col: col, Msg: sprintf("rule %q already defined at line %d", name, prev[0])}
		}
		s.rules[name] = alts
		s.order = append(s.order, name)
		s.at[name] = [2]int{line, col}
		switch p.peek() {
		case '\r', '\n':
			p.advance(1)
		case 0:
			if !p.eof() {
				return p.errf("expecting newline or end of input")
			}
		default:
			return p.errf("expecting newline or end of input, found %q", p.peek())
		}
		p.space(true)
	}
	return nil
}

func (p *parser) alternates(nested bool) ([][]*node, error) {
	var alts [][]*node
	for {
		seq, err := p.sequence(nested)
		if err != nil {
			return nil, err
		}
		alts = append(alts, seq)
		if p.peek() != '|' {
			return alts, nil
		}
		p.advance(1)
		p.space(true)
	}
}

func (p *parser) sequence(nested bool) ([]*node, error) {
	var seq []*node
	for !p.eof() {
		line, col := p.line, p.col
		c := p.peek()
		var n *node
		switch {
		case c == '"':
			p.advance(1)
			var lit []rune
			for p.peek() != '"' {
				if p.eof() {
					return nil, p.errf("unterminated string literal")
				}
				r, err := p.char()
				if err != nil {
					return nil, err
				}
				lit = append(lit, r)
			}
			p.advance(1)
			n = &node{kind: nLit, lit: lit}
		case c == '[':
			p.advance(1)
			n = &node{kind: nClass}
			if p.peek() == '^' {
				n.neg = true
				p.advance(1)
			}
			for p.peek() != ']' {
				if p.eof() {
					return nil, p.errf("unterminated character class")
				}
				lo, err := p.char()
				if err != nil {
					return nil, err
				}
				hi := lo
				if p.peek() == '-' && p.pos+1 < len(p.src) && p.src[p.pos+1] != ']' {
					p.advance(1)
					if hi, err = p.char(); err != nil {
						return nil, err
					}
					if hi < lo {
						return nil, p.errf("character range %q-%q is reversed", lo, hi)
					}
				}
				n.ranges = append(n.ranges, runeRange{lo, hi})
			}
			p.advance(1)
		case c == '.':
			p.advance(1)
			n = &node{kind: nClass, neg: true}
		case c == '<' || c == '!':
			return nil, p.errf("token terminals (<...>, !<...>) are not supported")
		case isWordChar(c):
			name, _ := p.name()
			n = &node{kind: nRef, name: name}
		case c == '(':
			p.advance(1)
			p.space(true)
			p.depth++
			if p.depth > maxNesting {
				return nil, p.errf("groups nested deeper than %d", maxNesting)
			}
			alts, err := p.alternates(true)
			p.depth--
			if err != nil {
				return nil, err
			}
			if p.peek() != ')' {
				return nil, p.errf("expecting )")
			}
			p.advance(1)
			n = &node{kind: nGroup, alts: alts}
		case c == '*' || c == '+' || c == '?' || c == '{':
			if len(seq) == 0 {
				return nil, p.errf("%q with nothing before it", c)
			}
			r, err := p.repeat(seq[len(seq)-1])
			if err != nil {
				return nil, err
			}
			seq[len(seq)-1] = r
			p.space(nested)
			continue
		default:
			return seq, nil
		}
		n.line, n.col = line, col
		seq = append(seq, n)
		p.space(nested)
	}
	return seq, nil
}

func (p *parser) repeat(last *node) (*node, error) {
	r := &node{kind: nRepeat, sub: last, line: p.line, col: p.col}
	switch p.peek() {
	case '*':
		r.min, r.max = 0, -1
		p.advance(1)
	case '+':
		r.min, r.max = 1, -1
		p.advance(1)
	case '?':
		r.min, r.max = 0, 1
		p.advance(1)
	case '{':
		p.advance(1)
		p.space(false)
		m, err := p.int()
		if err != nil {
			return nil, err
		}
		r.min, r.max = m, m
		p.space(false)
		if p.peek() == ',' {
			p.advance(1)
			p.space(false)
			r.max = -1
			if p.peek() >= '0' && p.peek() <= '9' {
				if r.max, err = p.int(); err != nil {
					return nil, err
				}
				if r.max < r.min {
					return nil, p.errf("repetition {%d,%d}: maximum below minimum", r.min, r.max)
				}
			}
			p.space(false)
		}
		if p.peek() != '}' {
			return nil, p.errf("expecting } to close the repetition")
		}
		p.advance(1)
	}
	return r, nil
}

func (p *parser) int() (int, error) {
	start := p.pos
	for p.peek() >= '0' && p.peek() <= '9' {
		p.advance(1)
	}
	if p.pos == start {
		return 0, p.errf("expecting an integer")
	}
	v, err := strconv.Atoi(p.src[start:p.pos])
	if err != nil || v > maxRepetition {
		return 0, p.errf("repetition count %s is over %d", p.src[start:p.pos], maxRepetition)
	}
	return v, nil
}

// char reads one character of a literal or class, escapes included.
func (p *parser) char() (rune, error) {
	if p.peek() == '\\' {
		if p.pos+1 >= len(p.src) {
			return 0, p.errf("unfinished escape")
		}
		e := p.src[p.pos+1]
		hex := 0
		switch e {
		case 'x':
			hex = 2
		case 'u':
			hex = 4
		case 'U':
			hex = 8
		case 't':
			p.advance(2)
			return '\t', nil
		case 'r':
			p.advance(2)
			return '\r', nil
		case 'n':
			p.advance(2)
			return '\n', nil
		case '\\', '"', '[', ']', '-':
			p.advance(2)
			return rune(e), nil
		default:
			return 0, p.errf("unknown escape \\%c", e)
		}
		if p.pos+2+hex > len(p.src) {
			return 0, p.errf("expecting %d hex digits", hex)
		}
		v, err := strconv.ParseUint(p.src[p.pos+2:p.pos+2+hex], 16, 32)
		if err != nil {
			return 0, p.errf("expecting %d hex digits", hex)
		}
		if v > utf8.MaxRune {
			return 0, p.errf("code point %#x is past U+10FFFF", v)
		}
		p.advance(2 + hex)
		return rune(v), nil
	}
	r, size := utf8.DecodeRuneInString(p.src[p.pos:])
	if r == utf8.RuneError && size <= 1 {
		return 0, p.errf("invalid UTF-8")
	}
	p.advance(size)
	return r, nil
}
