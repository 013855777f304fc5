package jinja

import (
	"fmt"
)

// The syntax tree. Expressions evaluate to values (eval.go); statements
// write output.

type expr interface{ line() int }

type pos struct{ ln int }

func (p pos) line() int { return p.ln }

type (
	constExpr struct {
		pos
		v any
	}
	nameExpr struct {
		pos
		name string
	}
	listExpr struct {
		pos
		items []expr
		tuple bool
	}
	dictExpr struct {
		pos
		keys, vals []expr
	}
	getattrExpr struct {
		pos
		obj  expr
		name string
	}
	getitemExpr struct {
		pos
		obj, key expr
	}
	sliceExpr struct {
		pos
		obj               expr
		start, stop, step expr // nil when absent
	}
	callArgs struct {
		args   []expr
		kwName []string
		kwVal  []expr
		star   expr // *args
		kwStar expr // **kwargs
	}
	callExpr struct {
		pos
		fn expr
		callArgs
	}
	filterExpr struct {
		pos
		x    expr // nil inside a filter block or a block set
		name string
		soft bool // inside an if: an unknown filter fails when it runs, not at parse
		callArgs
	}
	testExpr struct {
		pos
		x    expr
		name string
		soft bool
		callArgs
	}
	unaryExpr struct {
		pos
		op string // "not", "-", "+"
		x  expr
	}
	binExpr struct {
		pos
		op   string
		l, r expr
	}
	compareExpr struct {
		pos
		first expr
		ops   []string // "==", "!=", "<", "<=", ">", ">=", "in", "notin"
		rest  []expr
	}
	condExpr struct {
		pos
		test, then, els expr // els nil: undefined when test is false
	}
)

type stmt interface{}

type (
	dataStmt   struct{ text string }
	outputStmt struct {
		pos
		x expr
	}
	ifStmt struct {
		pos
		conds  []expr
		bodies [][]stmt
		els    []stmt
	}
	forStmt struct {
		pos
		target    expr // nameExpr or listExpr of names
		iter      expr
		filter    expr
		body, els []stmt
		recursive bool
	}
	setStmt struct {
		pos
		target expr // nameExpr, listExpr of names, or getattrExpr on a namespace
		x      expr
	}
	setBlockStmt struct {
		pos
		target  expr
		filters []*filterExpr
		body    []stmt
	}
	macroStmt struct {
		pos
		m *macroDef
	}
	callBlockStmt struct {
		pos
		call   *callExpr
		caller *macroDef
	}
	filterBlockStmt struct {
		pos
		filters []*filterExpr
		body    []stmt
	}
	breakStmt    struct{ pos }
	continueStmt struct{ pos }
)

type macroDef struct {
	name     string
	params   []string
	defaults []expr // aligned to the end of params
	body     []stmt
	line     int
}

// parser is a recursive-descent parser over the lexer's tokens, with
// Jinja2's grammar and precedence (parse_condexpr down to parse_primary).
type parser struct {
	toks []token
	i    int
	soft int // depth of if bodies and conditional expressions (soft frames)
	// env checks filter and test names at parse time.
	filters map[string]bool
	tests   map[string]bool
}

func (p *parser) cur() token  { return p.toks[p.i] }
func (p *parser) peek() token { return p.toks[min(p.i+1, len(p.toks)-1)] }
func (p *parser) next() token {
	t := p.toks[p.i]
	if p.i < len(p.toks)-1 {
		p.i++
	}
	return t
}

func (p *parser) errorf(t token, format string, args ...any) error {
	return &Error{Line: t.line, Msg: fmt.Sprintf(format, args...), Syntax: true}
}

func (p *parser) isOp(op string) bool {
	t := p.cur()
	return t.kind == tOp && t.val == op
}

func (p *parser) isName(name string) bool {
	t := p.cur()
	return t.kind == tName && t.val == name
}

func (p *parser) expectOp(op string) error {
	if !p.isOp(op) {
		return p.errorf(p.cur(), "expected '%s', got %s", op, p.cur())
	}
	p.next()
	return nil
}

func (p *parser) expectName() (string, error) {
	t := p.cur()
	if t.kind != tName {
		return "", p.errorf(t, "expected a name, got %s", t)
	}
	p.next()
	return t.val, nil
}

func (p *parser) expectBlockEnd() error {
	if p.cur().kind != tBlockEnd {
		return p.errorf(p.cur(), "expected the end of the statement block, got %s", p.cur())
	}
	p.next()
	return nil
}

// parseTemplate parses the whole token stream.
func (p *parser) parseTemplate() ([]stmt, error) {
	body, end, err := p.parseBody(nil)
	if err != nil {
		return nil, err
	}
	if end != "" {
		return nil, p.errorf(p.cur(), "unexpected '%s'", end)
	}
	return body, nil
}

// parseBody parses statements until a block tag whose name is in ends
// (consumed: the parser stands after the name) or the end of input
// (end is then "").
func (p *parser) parseBody(ends []string) ([]stmt, string, error) {
	var body []stmt
	for {
		t := p.cur()
		switch t.kind {
		case tEOF:
			if len(ends) > 0 {
				return nil, "", p.errorf(t, "unexpected end of template, expected %s", quoteList(ends))
			}
			return body, "", nil
		case tData:
			p.next()
			body = append(body, &dataStmt{text: t.val})
		case tVarBegin:
			p.next()
			x, err := p.parseTuple(true, false)
			if err != nil {
				return nil, "", err
			}
			if p.cur().kind != tVarEnd {
				return nil, "", p.errorf(p.cur(), "expected the end of the print statement '}}', got %s", p.cur())
			}
			p.next()
			body = append(body, &outputStmt{pos{t.line}, x})
		case tBlockBegin:
			p.next()
			nt := p.cur()
			if nt.kind != tName {
				return nil, "", p.errorf(nt, "expected a statement name, got %s", nt)
			}
			for _, e := range ends {
				if nt.val == e {
					p.next()
					return body, e, nil
				}
			}
			s, err := p.parseStatement()
			if err != nil {
				return nil, "", err
			}
			if s != nil {
				body = append(body, s...)
			}
		default:
			return nil, "", p.errorf(t, "unexpected %s", t)
		}
	}
}

func quoteList(names []string) string {
	s := ""
	for i, n := range names {
		if i > 0 {
			s += " or "
		}
		s += "'" + n + "'"
	}
	return s
}

// parseStatement parses the statement whose name is the current token.
func (p *parser) parseStatement() ([]stmt, error) {
	t := p.next()
	ln := pos{t.line}
	switch t.val {
	case "if":
		return p.parseIf(ln)
	case "for":
		return p.parseFor(ln)
	case "set":
		return p.parseSet(ln)
	case "macro":
		name, err := p.expectName()
		if err != nil {
			return nil, err
		}
		m, err := p.parseMacroSignature(name, t.line)
		if err != nil {
			return nil, err
		}
		if m.body, err = p.parseEndBlock("endmacro"); err != nil {
			return nil, err
		}
		return []stmt{&macroStmt{ln, m}}, nil
	case "call":
		caller := &macroDef{name: "caller", line: t.line}
		if p.isOp("(") {
			m, err := p.parseMacroSignature("caller", t.line)
			if err != nil {
				return nil, err
			}
			caller = m
		}
		x, err := p.parseExpression(true)
		if err != nil {
			return nil, err
		}
		call, ok := x.(*callExpr)
		if !ok {
			return nil, p.errorf(t, "expected a call after 'call'")
		}
		if err := p.expectBlockEnd(); err != nil {
			return nil, err
		}
		if caller.body, err = p.parseEndBlock("endcall"); err != nil {
			return nil, err
		}
		return []stmt{&callBlockStmt{ln, call, caller}}, nil
	case "filter":
		var filters []*filterExpr
		for {
			f, err := p.parseFilter(nil)
			if err != nil {
				return nil, err
			}
			filters = append(filters, f)
			if !p.isOp("|") {
				break
			}
			p.next()
		}
		if err := p.expectBlockEnd(); err != nil {
			return nil, err
		}
		body, err := p.parseEndBlock("endfilter")
		if err != nil {
			return nil, err
		}
		return []stmt{&filterBlockStmt{ln, filters, body}}, nil
	case "break", "continue":
		if err := p.expectBlockEnd(); err != nil {
			return nil, err
		}
		if t.val == "break" {
			return []stmt{&breakStmt{ln}}, nil
		}
		return []stmt{&continueStmt{ln}}, nil
	case "generation": // transformers' assistant-mask tag: renders its body
		if err := p.expectBlockEnd(); err != nil {
			return nil, err
		}
		return p.parseEndBlock("endgeneration")
	}
	return nil, p.errorf(t, "encountered unknown tag '%s'", t.val)
}

// parseEndBlock parses a body up to {% end %}, inclusive.
func (p *parser) parseEndBlock(end string) ([]stmt, error) {
	body, _, err := p.parseBody([]string{end})
	if err != nil {
		return nil, err
	}
	return body, p.expectBlockEnd()
}

func (p *parser) parseIf(ln pos) ([]stmt, error) {
	s := &ifStmt{pos: ln}
	p.soft++
	defer func() { p.soft-- }()
	for {
		c, err := p.parseTuple(false, true) // no conditional expression, as Jinja2's parse_if
		if err != nil {
			return nil, err
		}
		if err := p.expectBlockEnd(); err != nil {
			return nil, err
		}
		body, end, err := p.parseBody([]string{"elif", "else", "endif"})
		if err != nil {
			return nil, err
		}
		s.conds = append(s.conds, c)
		s.bodies = append(s.bodies, body)
		switch end {
		case "elif":
			continue
		case "else":
			if err := p.expectBlockEnd(); err != nil {
				return nil, err
			}
			if s.els, err = p.parseEndBlock("endif"); err != nil {
				return nil, err
			}
		default:
			if err := p.expectBlockEnd(); err != nil {
				return nil, err
			}
		}
		return []stmt{s}, nil
	}
}

func (p *parser) parseFor(ln pos) ([]stmt, error) {
	soft := p.soft
	p.soft = 0 // a loop body is a frame of its own
	defer func() { p.soft = soft }()
	s := &forStmt{pos: ln}
	var err error
	if s.target, err = p.parseAssignTarget(false); err != nil {
		return nil, err
	}
	if !p.isName("in") {
		return nil, p.errorf(p.cur(), "expected 'in', got %s", p.cur())
	}
	p.next()
	if s.iter, err = p.parseTuple(false, true); err != nil {
		return nil, err
	}
	if p.isName("if") {
		p.next()
		if s.filter, err = p.parseExpression(true); err != nil {
			return nil, err
		}
	}
	if p.isName("recursive") {
		p.next()
		s.recursive = true
	}
	if err := p.expectBlockEnd(); err != nil {
		return nil, err
	}
	body, end, err := p.parseBody([]string{"endfor", "else"})
	if err != nil {
		return nil, err
	}
	s.body = body
	if err := p.expectBlockEnd(); err != nil {
		return nil, err
	}
	if end == "else" {
		if s.els, err = p.parseEndBlock("endfor"); err != nil {
			return nil, err
		}
	}
	return []stmt{s}, nil
}

func (p *parser) parseSet(ln pos) ([]stmt, error) {
	target, err := p.parseAssignTarget(true)
	if err != nil {
		return nil, err
	}
	if p.isOp("=") {
		p.next()
		x, err := p.parseTuple(false, false)
		if err != nil {
			return nil, err
		}
		if err := p.expectBlockEnd(); err != nil {
			return nil, err
		}
		return []stmt{&setStmt{ln, target, x}}, nil
	}
	s := &setBlockStmt{pos: ln, target: target}
	for p.isOp("|") {
		p.next()
		f, err := p.parseFilter(nil)
		if err != nil {
			return nil, err
		}
		s.filters = append(s.filters, f)
	}
	if err := p.expectBlockEnd(); err != nil {
		return nil, err
	}
	if s.body, err = p.parseEndBlock("endset"); err != nil {
		return nil, err
	}
	return []stmt{s}, nil
}

// parseAssignTarget parses a name, names separated by commas, or (for
// set) a namespace attribute ns.attr.
func (p *parser) parseAssignTarget(withNamespace bool) (expr, error) {
	t := p.cur()
	if withNamespace && t.kind == tName && p.peek().kind == tOp && p.peek().val == "." {
		p.next()
		p.next()
		attr, err := p.expectName()
		if err != nil {
			return nil, err
		}
		return &getattrExpr{pos{t.line}, &nameExpr{pos{t.line}, t.val}, attr}, nil
	}
	paren := p.isOp("(")
	if paren {
		p.next()
	}
	var names []expr
	for {
		nt := p.cur()
		if nt.kind != tName {
			return nil, p.errorf(nt, "can't assign to %s", nt)
		}
		p.next()
		names = append(names, &nameExpr{pos{nt.line}, nt.val})
		if !p.isOp(",") {
			break
		}
		p.next()
		if !paren && p.cur().kind != tName {
			break
		}
	}
	if paren {
		if err := p.expectOp(")"); err != nil {
			return nil, err
		}
	}
	if len(names) == 1 && !paren {
		return names[0], nil
	}
	return &listExpr{pos{t.line}, names, true}, nil
}

func (p *parser) parseMacroSignature(name string, line int) (*macroDef, error) {
	m := &macroDef{name: name, line: line}
	if err := p.expectOp("("); err != nil {
		return nil, err
	}
	for !p.isOp(")") {
		if len(m.params) > 0 {
			if err := p.expectOp(","); err != nil {
				return nil, err
			}
			if p.isOp(")") {
				break
			}
		}
		arg, err := p.expectName()
		if err != nil {
			return nil, err
		}
		m.params = append(m.params, arg)
		if p.isOp("=") {
			p.next()
			d, err := p.parseExpression(true)
			if err != nil {
				return nil, err
			}
			m.defaults = append(m.defaults, d)
		} else if len(m.defaults) > 0 {
			return nil, p.errorf(p.cur(), "non-default argument follows default argument")
		}
	}
	p.next()
	if name != "caller" {
		if err := p.expectBlockEnd(); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// parseTuple parses expressions separated by commas: one expression, or
// a tuple when there is a comma. simplified parses no conditional
// expressions (a for loop's iterable, whose "if" filters).
func (p *parser) parseTuple(allowEmpty, simplified bool) (expr, error) {
	start := p.cur()
	var items []expr
	comma := false
	for {
		if len(items) > 0 {
			if !p.isOp(",") {
				break
			}
			p.next()
			comma = true
		}
		if p.tupleEnds() {
			break
		}
		var x expr
		var err error
		if simplified {
			x, err = p.parseOr()
		} else {
			x, err = p.parseExpression(true)
		}
		if err != nil {
			return nil, err
		}
		items = append(items, x)
	}
	if len(items) == 0 {
		if allowEmpty {
			return nil, p.errorf(start, "expected an expression, got %s", start)
		}
		return nil, p.errorf(start, "expected an expression, got %s", start)
	}
	if len(items) == 1 && !comma {
		return items[0], nil
	}
	return &listExpr{pos{start.line}, items, true}, nil
}

func (p *parser) tupleEnds() bool {
	t := p.cur()
	switch t.kind {
	case tVarEnd, tBlockEnd, tEOF:
		return true
	case tOp:
		return t.val == ")" || t.val == "]" || t.val == "}" || t.val == "="
	case tName:
		return t.val == "in" || t.val == "recursive"
	}
	return false
}

func (p *parser) parseExpression(withCond bool) (expr, error) {
	if withCond {
		return p.parseCondExpr()
	}
	return p.parseOr()
}

func (p *parser) parseCondExpr() (expr, error) {
	x, err := p.parseOr()
	if err != nil {
		return nil, err
	}
	for p.isName("if") {
		t := p.next()
		p.soft++
		test, err := p.parseOr()
		if err != nil {
			p.soft--
			return nil, err
		}
		var els expr
		if p.isName("else") {
			p.next()
			if els, err = p.parseCondExpr(); err != nil {
				p.soft--
				return nil, err
			}
		}
		p.soft--
		x = &condExpr{pos{t.line}, test, x, els}
	}
	return x, nil
}

func (p *parser) parseOr() (expr, error) {
	x, err := p.parseAnd()
	if err != nil {
		return nil, err
	}
	for p.isName("or") {
		t := p.next()
		r, err := p.parseAnd()
		if err != nil {
			return nil, err
		}
		x = &binExpr{pos{t.line}, "or", x, r}
	}
	return x, nil
}

func (p *parser) parseAnd() (expr, error) {
	x, err := p.parseNot()
	if err != nil {
		return nil, err
	}
	for p.isName("and") {
		t := p.next()
		r, err := p.parseNot()
		if err != nil {
			return nil, err
		}
		x = &binExpr{pos{t.line}, "and", x, r}
	}
	return x, nil
}

func (p *parser) parseNot() (expr, error) {
	if p.isName("not") {
		t := p.next()
		x, err := p.parseNot()
		if err != nil {
			return nil, err
		}
		return &unaryExpr{pos{t.line}, "not", x}, nil
	}
	return p.parseCompare()
}

func (p *parser) parseCompare() (expr, error) {
	first, err := p.parseMath1()
	if err != nil {
		return nil, err
	}
	c := &compareExpr{pos: pos{first.line()}, first: first}
	for {
		t := p.cur()
		var op string
		switch {
		case t.kind == tOp && (t.val == "==" || t.val == "!=" || t.val == "<" || t.val == "<=" || t.val == ">" || t.val == ">="):
			op = t.val
			p.next()
		case t.kind == tName && t.val == "in":
			op = "in"
			p.next()
		case t.kind == tName && t.val == "not" && p.peek().kind == tName && p.peek().val == "in":
			op = "notin"
			p.next()
			p.next()
		}
		if op == "" {
			break
		}
		r, err := p.parseMath1()
		if err != nil {
			return nil, err
		}
		c.ops = append(c.ops, op)
		c.rest = append(c.rest, r)
	}
	if len(c.ops) == 0 {
		return first, nil
	}
	return c, nil
}

func (p *parser) parseMath1() (expr, error) {
	x, err := p.parseConcat()
	if err != nil {
		return nil, err
	}
	for p.isOp("+") || p.isOp("-") {
		t := p.next()
		r, err := p.parseConcat()
		if err != nil {
			return nil, err
		}
		x = &binExpr{pos{t.line}, t.val, x, r}
	}
	return x, nil
}

func (p *parser) parseConcat() (expr, error) {
	x, err := p.parseMath2()
	if err != nil {
		return nil, err
	}
	for p.isOp("~") {
		t := p.next()
		r, err := p.parseMath2()
		if err != nil {
			return nil, err
		}
		x = &binExpr{pos{t.line}, "~", x, r}
	}
	return x, nil
}

func (p *parser) parseMath2() (expr, error) {
	x, err := p.parsePow()
	if err != nil {
		return nil, err
	}
	for p.isOp("*") || p.isOp("/") || p.isOp("//") || p.isOp("%") {
		t := p.next()
		r, err := p.parsePow()
		if err != nil {
			return nil, err
		}
		x = &binExpr{pos{t.line}, t.val, x, r}
	}
	return x, nil
}

func (p *parser) parsePow() (expr, error) {
	x, err := p.parseUnary(true)
	if err != nil {
		return nil, err
	}
	for p.isOp("**") {
		t := p.next()
		r, err := p.parseUnary(true)
		if err != nil {
			return nil, err
		}
		x = &binExpr{pos{t.line}, "**", x, r}
	}
	return x, nil
}

func (p *parser) parseUnary(withFilter bool) (expr, error) {
	t := p.cur()
	var x expr
	var err error
	if p.isOp("-") || p.isOp("+") {
		p.next()
		inner, err := p.parseUnary(false)
		if err != nil {
			return nil, err
		}
		x = &unaryExpr{pos{t.line}, t.val, inner}
	} else if x, err = p.parsePrimary(); err != nil {
		return nil, err
	}
	if x, err = p.parsePostfix(x); err != nil {
		return nil, err
	}
	if withFilter {
		return p.parseFilterExpr(x)
	}
	return x, nil
}

func (p *parser) parsePrimary() (expr, error) {
	t := p.cur()
	ln := pos{t.line}
	switch t.kind {
	case tName:
		p.next()
		switch t.val {
		case "true", "True":
			return &constExpr{ln, true}, nil
		case "false", "False":
			return &constExpr{ln, false}, nil
		case "none", "None":
			return &constExpr{ln, nil}, nil
		}
		return &nameExpr{ln, t.val}, nil
	case tString:
		s := ""
		for p.cur().kind == tString { // adjacent literals concatenate
			s += p.next().val
		}
		return &constExpr{ln, s}, nil
	case tInt, tFloat:
		p.next()
		return &constExpr{ln, t.num}, nil
	case tOp:
		switch t.val {
		case "(":
			p.next()
			if p.isOp(")") {
				p.next()
				return &listExpr{ln, nil, true}, nil
			}
			x, err := p.parseTuple(false, false)
			if err != nil {
				return nil, err
			}
			return x, p.expectOp(")")
		case "[":
			p.next()
			l := &listExpr{pos: ln}
			for !p.isOp("]") {
				if len(l.items) > 0 {
					if err := p.expectOp(","); err != nil {
						return nil, err
					}
					if p.isOp("]") {
						break
					}
				}
				x, err := p.parseExpression(true)
				if err != nil {
					return nil, err
				}
				l.items = append(l.items, x)
			}
			p.next()
			return l, nil
		case "{":
			p.next()
			d := &dictExpr{pos: ln}
			for !p.isOp("}") {
				if len(d.keys) > 0 {
					if err := p.expectOp(","); err != nil {
						return nil, err
					}
					if p.isOp("}") {
						break
					}
				}
				k, err := p.parseExpression(true)
				if err != nil {
					return nil, err
				}
				if err := p.expectOp(":"); err != nil {
					return nil, err
				}
				v, err := p.parseExpression(true)
				if err != nil {
					return nil, err
				}
				d.keys = append(d.keys, k)
				d.vals = append(d.vals, v)
			}
			p.next()
			return d, nil
		}
	}
	return nil, p.errorf(t, "unexpected %s", t)
}

func (p *parser) parsePostfix(x expr) (expr, error) {
	for {
		t := p.cur()
		switch {
		case p.isOp("."):
			p.next()
			nt := p.next()
			switch nt.kind {
			case tName:
				x = &getattrExpr{pos{t.line}, x, nt.val}
			case tInt:
				x = &getitemExpr{pos{t.line}, x, &constExpr{pos{t.line}, nt.num}}
			default:
				return nil, p.errorf(nt, "expected a name after '.', got %s", nt)
			}
		case p.isOp("["):
			p.next()
			var err error
			if x, err = p.parseSubscript(x, t.line); err != nil {
				return nil, err
			}
		case p.isOp("("):
			var err error
			if x, err = p.parseCall(x); err != nil {
				return nil, err
			}
		default:
			return x, nil
		}
	}
}

// parseSubscript parses what follows "[": a key, a slice or a tuple key.
func (p *parser) parseSubscript(obj expr, line int) (expr, error) {
	var parts [3]expr
	n := 0 // colons seen
	for {
		if p.isOp("]") {
			break
		}
		if p.isOp(":") {
			p.next()
			n++
			if n > 2 {
				return nil, p.errorf(p.cur(), "too many ':' in a slice")
			}
			continue
		}
		if parts[n] != nil {
			return nil, p.errorf(p.cur(), "expected ']', got %s", p.cur())
		}
		var x expr
		var err error
		if n == 0 {
			x, err = p.parseTuple(false, false)
		} else {
			x, err = p.parseExpression(true)
		}
		if err != nil {
			return nil, err
		}
		parts[n] = x
	}
	p.next()
	if n == 0 {
		if parts[0] == nil {
			return nil, p.errorf(p.cur(), "expected a subscript")
		}
		return &getitemExpr{pos{line}, obj, parts[0]}, nil
	}
	return &sliceExpr{pos{line}, obj, parts[0], parts[1], parts[2]}, nil
}

func (p *parser) parseCallArgs() (callArgs, error) {
	var a callArgs
	if err := p.expectOp("("); err != nil {
		return a, err
	}
	first := true
	for !p.isOp(")") {
		if !first {
			if err := p.expectOp(","); err != nil {
				return a, err
			}
			if p.isOp(")") {
				break
			}
		}
		first = false
		switch {
		case p.isOp("*"):
			p.next()
			x, err := p.parseExpression(true)
			if err != nil {
				return a, err
			}
			a.star = x
		case p.isOp("**"):
			p.next()
			x, err := p.parseExpression(true)
			if err != nil {
				return a, err
			}
			a.kwStar = x
		case p.cur().kind == tName && p.peek().kind == tOp && p.peek().val == "=":
			name := p.next().val
			p.next()
			x, err := p.parseExpression(true)
			if err != nil {
				return a, err
			}
			a.kwName = append(a.kwName, name)
			a.kwVal = append(a.kwVal, x)
		default:
			if len(a.kwName) > 0 {
				return a, p.errorf(p.cur(), "positional argument follows keyword argument")
			}
			x, err := p.parseExpression(true)
			if err != nil {
				return a, err
			}
			a.args = append(a.args, x)
		}
	}
	p.next()
	return a, nil
}

func (p *parser) parseCall(fn expr) (expr, error) {
	line := p.cur().line
	a, err := p.parseCallArgs()
	if err != nil {
		return nil, err
	}
	return &callExpr{pos{line}, fn, a}, nil
}

func (p *parser) parseFilterExpr(x expr) (expr, error) {
	for {
		switch {
		case p.isOp("|"):
			p.next()
			f, err := p.parseFilter(x)
			if err != nil {
				return nil, err
			}
			x = f
		case p.isName("is"):
			var err error
			if x, err = p.parseTest(x); err != nil {
				return nil, err
			}
		case p.isOp("("):
			var err error
			if x, err = p.parseCall(x); err != nil {
				return nil, err
			}
		default:
			return x, nil
		}
	}
}

// dottedName parses a filter or test name (dots allowed, as Jinja2 does).
func (p *parser) dottedName() (string, token, error) {
	t := p.cur()
	name, err := p.expectName()
	if err != nil {
		return "", t, err
	}
	for p.isOp(".") {
		p.next()
		n, err := p.expectName()
		if err != nil {
			return "", t, err
		}
		name += "." + n
	}
	return name, t, nil
}

func (p *parser) parseFilter(x expr) (*filterExpr, error) {
	name, t, err := p.dottedName()
	if err != nil {
		return nil, err
	}
	f := &filterExpr{pos: pos{t.line}, x: x, name: name, soft: p.soft > 0}
	if !p.filters[name] && !f.soft {
		return nil, p.errorf(t, "no filter named '%s'", name)
	}
	if p.isOp("(") {
		if f.callArgs, err = p.parseCallArgs(); err != nil {
			return nil, err
		}
	}
	return f, nil
}

func (p *parser) parseTest(x expr) (expr, error) {
	t := p.next() // "is"
	negate := false
	if p.isName("not") {
		p.next()
		negate = true
	}
	name, nt, err := p.dottedName()
	if err != nil {
		return nil, err
	}
	te := &testExpr{pos: pos{t.line}, x: x, name: name, soft: p.soft > 0}
	if !p.tests[name] && !te.soft {
		return nil, p.errorf(nt, "no test named '%s'", name)
	}
	c := p.cur()
	switch {
	case p.isOp("("):
		if te.callArgs, err = p.parseCallArgs(); err != nil {
			return nil, err
		}
	case c.kind == tName && c.val == "is":
		return nil, p.errorf(c, "you cannot chain multiple tests with is")
	case c.kind == tName && c.val != "else" && c.val != "or" && c.val != "and",
		c.kind == tString, c.kind == tInt, c.kind == tFloat, p.isOp("["), p.isOp("{"):
		arg, err := p.parsePrimary()
		if err != nil {
			return nil, err
		}
		if arg, err = p.parsePostfix(arg); err != nil {
			return nil, err
		}
		te.args = []expr{arg}
	}
	if negate {
		return &unaryExpr{pos{t.line}, "not", te}, nil
	}
	return te, nil
}
