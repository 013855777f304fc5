package jinja

import (
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"
)

// scope is one frame of variables: the template's top level, a loop
// iteration or a macro call. Lookups walk up to the globals. Frames hold
// few names, so a slice beats a map.
type scope struct {
	names  []string
	vals   []any
	parent *scope
	global map[string]any // the root frame's
}

func (s *scope) lookup(name string) (any, bool) {
	for ; s != nil; s = s.parent {
		for i := len(s.names) - 1; i >= 0; i-- {
			if s.names[i] == name {
				return s.vals[i], true
			}
		}
		if v, ok := s.global[name]; ok {
			return v, true
		}
	}
	return nil, false
}

func (s *scope) set(name string, v any) {
	for i, n := range s.names {
		if n == name {
			s.vals[i] = v
			return
		}
	}
	s.names = append(s.names, name)
	s.vals = append(s.vals, v)
}

func child(s *scope) *scope { return &scope{parent: s} }

// macro is a callable value: a template macro (def, with the scope it was
// defined in) or a built-in function or bound method (fn).
type macro struct {
	def    *macroDef
	scope  *scope
	caller *macro // the {% call %} body, for a macro called by one
	name   string
	fn     func(st *state, line int, args []any, kw *dict) any
	unsafe bool // a method the immutable sandbox refuses (list.append)
	self   any
}

// loopInfo is the loop variable of a for loop.
type loopInfo struct {
	items   []any
	index   int
	depth   int
	lastVal any // for changed()
	changed bool
	recurse func(st *state, iter any) string
}

type ctl int

const (
	ctlNone ctl = iota
	ctlBreak
	ctlContinue
)

// state is one rendering.
type state struct {
	limits   Limits
	now      time.Time
	steps    int64
	depth    int
	filters  map[string]filterFunc
	tests    map[string]testFunc
	globals  *scope
	outBytes int
}

// failure is how a runtime error unwinds the evaluator to Render, which
// recovers it into an *Error (no panic leaves the package).
type failure struct{ err *Error }

func (st *state) fail(line int, format string, args ...any) {
	panic(failure{&Error{Line: line, Msg: fmt.Sprintf(format, args...)}})
}

func (st *state) failLimit(line int, format string, args ...any) {
	panic(failure{&Error{Line: line, Msg: fmt.Sprintf(format, args...), Limit: true}})
}

func (st *state) step(line int) {
	st.steps++
	if st.limits.Steps > 0 && st.steps > st.limits.Steps {
		st.failLimit(line, "the template ran past %d steps", st.limits.Steps)
	}
}

// checkSize fails when a string of n bytes is over the size cap.
func (st *state) checkSize(line, n int) {
	if st.limits.Bytes > 0 && n > st.limits.Bytes {
		st.failLimit(line, "a string of %d bytes is over the %d-byte cap", n, st.limits.Bytes)
	}
}

// failUndefined fails with u's message (an operation Undefined refuses).
func (st *state) failUndefined(line int, u *undefined) {
	if u.hint != "" && strings.HasPrefix(u.hint, "access to attribute") {
		st.fail(line, "SecurityError: %s", u.hint)
	}
	st.fail(line, "UndefinedError: %s", u.message())
}

// writer collects output under the output cap.
type writer struct {
	b  strings.Builder
	st *state
}

func (w *writer) write(line int, s string) {
	w.st.outBytes += len(s)
	if w.st.limits.Bytes > 0 && w.b.Len()+len(s) > w.st.limits.Bytes {
		w.st.failLimit(line, "the output is over the %d-byte cap", w.st.limits.Bytes)
	}
	w.b.WriteString(s)
}

func (st *state) execBody(body []stmt, sc *scope, w *writer) ctl {
	for _, s := range body {
		if c := st.exec(s, sc, w); c != ctlNone {
			return c
		}
	}
	return ctlNone
}

func (st *state) exec(s stmt, sc *scope, w *writer) ctl {
	switch n := s.(type) {
	case *dataStmt:
		w.write(0, n.text)
	case *outputStmt:
		st.step(n.ln)
		w.write(n.ln, pyStr(st.eval(n.x, sc)))
	case *ifStmt:
		for i, c := range n.conds {
			if truthy(st.eval(c, sc)) {
				return st.execBody(n.bodies[i], sc, w)
			}
		}
		return st.execBody(n.els, sc, w)
	case *forStmt:
		return st.execFor(n, sc, w, st.eval(n.iter, sc), 0)
	case *setStmt:
		st.assign(n.target, st.eval(n.x, sc), sc, n.ln)
	case *setBlockStmt:
		v := any(st.capture(n.body, sc))
		for _, f := range n.filters {
			v = st.applyFilter(f, v, sc)
		}
		st.assign(n.target, v, sc, n.ln)
	case *macroStmt:
		sc.set(n.m.name, &macro{def: n.m, scope: sc})
	case *callBlockStmt:
		caller := &macro{def: n.caller, scope: sc}
		fn := st.eval(n.call.fn, sc)
		m, ok := fn.(*macro)
		if !ok || m.def == nil {
			st.fail(n.ln, "TypeError: {%% call %%} needs a macro, got %s", typeName(fn))
		}
		args, kw := st.evalArgs(n.call.callArgs, sc, n.ln)
		withCaller := *m
		withCaller.caller = caller
		w.write(n.ln, pyStr(st.callMacro(&withCaller, n.ln, args, kw)))
	case *filterBlockStmt:
		v := any(st.capture(n.body, sc))
		for _, f := range n.filters {
			v = st.applyFilter(f, v, sc)
		}
		w.write(n.ln, pyStr(v))
	case *breakStmt:
		return ctlBreak
	case *continueStmt:
		return ctlContinue
	default:
		panic(fmt.Sprintf("jinja: unknown statement %T", s))
	}
	return ctlNone
}

// capture renders body into a string (a block set, a filter block).
func (st *state) capture(body []stmt, sc *scope) string {
	w := &writer{st: st}
	st.execBody(body, sc, w)
	return w.b.String()
}

func (st *state) execFor(n *forStmt, sc *scope, w *writer, iterV any, depth int) ctl {
	items, ok := iterate(iterV)
	if !ok {
		st.fail(n.iter.line(), "TypeError: '%s' object is not iterable", typeName(iterV))
	}
	if n.filter != nil {
		var kept []any
		for _, it := range items {
			st.step(n.ln)
			isc := child(sc)
			st.assign(n.target, it, isc, n.ln)
			if truthy(st.eval(n.filter, isc)) {
				kept = append(kept, it)
			}
		}
		items = kept
	}
	if len(items) == 0 {
		st.execBody(n.els, sc, w)
		return ctlNone
	}
	loop := &loopInfo{items: items, depth: depth}
	if n.recursive {
		loop.recurse = func(st *state, iter any) string {
			rw := &writer{st: st}
			st.execFor(n, sc, rw, iter, depth+1)
			return rw.b.String()
		}
	}
	for i, it := range items {
		st.step(n.ln)
		loop.index = i
		isc := child(sc)
		isc.set("loop", loop)
		st.assign(n.target, it, isc, n.ln)
		if c := st.execBody(n.body, isc, w); c == ctlBreak {
			break
		}
	}
	return ctlNone
}

// assign binds v to target: a name, names unpacking an iterable, or a
// namespace attribute.
func (st *state) assign(target expr, v any, sc *scope, line int) {
	switch t := target.(type) {
	case *nameExpr:
		sc.set(t.name, v)
	case *listExpr:
		items, ok := iterate(v)
		if !ok {
			st.fail(line, "TypeError: cannot unpack non-iterable %s object", typeName(v))
		}
		if len(items) != len(t.items) {
			if len(items) < len(t.items) {
				st.fail(line, "ValueError: not enough values to unpack (expected %d, got %d)", len(t.items), len(items))
			}
			st.fail(line, "ValueError: too many values to unpack (expected %d)", len(t.items))
		}
		for i, it := range t.items {
			st.assign(it, items[i], sc, line)
		}
	case *getattrExpr:
		obj := st.eval(t.obj, sc)
		ns, ok := obj.(*namespace)
		if !ok {
			st.fail(line, "TemplateRuntimeError: cannot assign attribute on non-namespace object")
		}
		ns.attrs.set(t.name, v)
	}
}

func (st *state) eval(x expr, sc *scope) any {
	switch n := x.(type) {
	case *constExpr:
		return n.v
	case *nameExpr:
		if v, ok := sc.lookup(n.name); ok {
			return v
		}
		return &undefined{name: n.name}
	case *listExpr:
		items := make([]any, len(n.items))
		for i, it := range n.items {
			items[i] = st.eval(it, sc)
		}
		if n.tuple {
			return newTuple(items...)
		}
		return newList(items)
	case *dictExpr:
		d := newDict()
		for i := range n.keys {
			k := st.eval(n.keys[i], sc)
			if !d.set(k, st.eval(n.vals[i], sc)) {
				st.fail(n.ln, "TypeError: unhashable type: '%s'", typeName(k))
			}
		}
		return d
	case *getattrExpr:
		return st.getattr(st.eval(n.obj, sc), n.name, n.ln)
	case *getitemExpr:
		return st.getitem(st.eval(n.obj, sc), st.eval(n.key, sc), n.ln)
	case *sliceExpr:
		return st.slice(n, sc)
	case *callExpr:
		fn := st.eval(n.fn, sc)
		args, kw := st.evalArgs(n.callArgs, sc, n.ln)
		return st.call(fn, n.ln, args, kw)
	case *filterExpr:
		return st.applyFilter(n, st.eval(n.x, sc), sc)
	case *testExpr:
		return st.applyTest(n, st.eval(n.x, sc), sc)
	case *unaryExpr:
		v := st.eval(n.x, sc)
		switch n.op {
		case "not":
			return !truthy(v)
		case "-":
			switch y := v.(type) {
			case bool:
				i, _ := toInt(y)
				return -i
			case int64:
				return -y
			case float64:
				return -y
			case *undefined:
				st.failUndefined(n.ln, y)
			}
			st.fail(n.ln, "TypeError: bad operand type for unary -: '%s'", typeName(v))
		default:
			switch y := v.(type) {
			case bool:
				i, _ := toInt(y)
				return i
			case int64, float64:
				return y
			case *undefined:
				st.failUndefined(n.ln, y)
			}
			st.fail(n.ln, "TypeError: bad operand type for unary +: '%s'", typeName(v))
		}
	case *binExpr:
		switch n.op {
		case "and":
			l := st.eval(n.l, sc)
			if !truthy(l) {
				return l
			}
			return st.eval(n.r, sc)
		case "or":
			l := st.eval(n.l, sc)
			if truthy(l) {
				return l
			}
			return st.eval(n.r, sc)
		case "~":
			l, r := pyStr(st.eval(n.l, sc)), pyStr(st.eval(n.r, sc))
			st.checkSize(n.ln, len(l)+len(r))
			return l + r
		}
		return st.binop(n.op, st.eval(n.l, sc), st.eval(n.r, sc), n.ln)
	case *compareExpr:
		l := st.eval(n.first, sc)
		for i, op := range n.ops {
			r := st.eval(n.rest[i], sc)
			if !st.compare(op, l, r, n.ln) {
				return false
			}
			l = r
		}
		return true
	case *condExpr:
		if truthy(st.eval(n.test, sc)) {
			return st.eval(n.then, sc)
		}
		if n.els == nil {
			return &undefined{name: "the inline if-expression", hint: "the inline if-expression on line " + fmt.Sprint(n.ln) + " evaluated to false and no else section was defined."}
		}
		return st.eval(n.els, sc)
	}
	panic(fmt.Sprintf("jinja: unknown expression %T", x))
}

func (st *state) evalArgs(a callArgs, sc *scope, line int) ([]any, *dict) {
	args := make([]any, 0, len(a.args))
	for _, x := range a.args {
		args = append(args, st.eval(x, sc))
	}
	if a.star != nil {
		v := st.eval(a.star, sc)
		items, ok := iterate(v)
		if !ok {
			st.fail(line, "TypeError: argument after * must be an iterable, not %s", typeName(v))
		}
		args = append(args, items...)
	}
	var kw *dict
	if len(a.kwName) > 0 || a.kwStar != nil {
		kw = newDict()
		for i, name := range a.kwName {
			kw.set(name, st.eval(a.kwVal[i], sc))
		}
		if a.kwStar != nil {
			v := st.eval(a.kwStar, sc)
			d, ok := v.(*dict)
			if !ok {
				st.fail(line, "TypeError: argument after ** must be a mapping, not %s", typeName(v))
			}
			for i, k := range d.keys {
				kw.set(k, d.vals[i])
			}
		}
	}
	return args, kw
}

func (st *state) compare(op string, l, r any, line int) bool {
	switch op {
	case "==":
		return equal(l, r)
	case "!=":
		return !equal(l, r)
	case "in":
		return st.contains(r, l, line)
	case "notin":
		return !st.contains(r, l, line)
	}
	for _, v := range []any{l, r} {
		if u, ok := v.(*undefined); ok {
			st.failUndefined(line, u)
		}
	}
	var res, ok bool
	switch op {
	case "<":
		res, ok = less(l, r)
	case ">":
		res, ok = less(r, l)
	case "<=":
		lt, good := less(l, r)
		res, ok = lt || (good && equal(l, r)), good
	case ">=":
		gt, good := less(r, l)
		res, ok = gt || (good && equal(l, r)), good
	}
	if !ok {
		st.fail(line, "TypeError: '%s' not supported between instances of '%s' and '%s'", op, typeName(l), typeName(r))
	}
	return res
}

// contains is Python's needle in haystack.
func (st *state) contains(haystack, needle any, line int) bool {
	switch h := haystack.(type) {
	case string, markup:
		s, _ := strOf(h)
		n, ok := strOf(needle)
		if !ok {
			if u, isU := needle.(*undefined); isU {
				st.failUndefined(line, u)
			}
			st.fail(line, "TypeError: 'in <string>' requires string as left operand, not %s", typeName(needle))
		}
		return strings.Contains(s, n)
	case *dict:
		_, ok := h.get(needle)
		return ok
	case *list, *undefined:
		items, _ := iterate(h)
		for _, it := range items {
			if equal(it, needle) {
				return true
			}
		}
		return false
	}
	st.fail(line, "TypeError: argument of type '%s' is not iterable", typeName(haystack))
	return false
}

func (st *state) binop(op string, l, r any, line int) any {
	for _, v := range []any{l, r} {
		if u, ok := v.(*undefined); ok {
			st.failUndefined(line, u)
		}
	}
	if op == "+" {
		if s, ok := strOf(l); ok {
			if t, ok := strOf(r); ok {
				st.checkSize(line, len(s)+len(t))
				_, lm := l.(markup)
				_, rm := r.(markup)
				switch {
				case lm:
					return markup(s) + toMarkup(r)
				case rm:
					return toMarkup(l) + markup(t)
				}
				return s + t
			}
		}
		if a, ok := l.(*list); ok {
			if b, ok := r.(*list); ok && (a.kind == kList || a.kind == kTuple) && a.kind == b.kind {
				st.checkSize(line, 16*(len(a.items)+len(b.items)))
				items := append(append(make([]any, 0, len(a.items)+len(b.items)), a.items...), b.items...)
				return &list{items: items, kind: a.kind}
			}
		}
	}
	if op == "*" {
		if s, n, ok := repeatArgs(l, r); ok {
			if n <= 0 {
				return ""
			}
			st.checkSize(line, len(s)*int(min(n, math.MaxInt32)))
			if _, m := l.(markup); m {
				return markup(strings.Repeat(s, int(n)))
			}
			return strings.Repeat(s, int(n))
		}
		if a, ok := l.(*list); ok && (a.kind == kList || a.kind == kTuple) {
			if n, ok := toInt(r); ok {
				st.checkSize(line, 16*len(a.items)*int(max(0, min(n, math.MaxInt32))))
				var items []any
				for range n {
					items = append(items, a.items...)
				}
				return &list{items: items, kind: a.kind}
			}
		}
	}
	if op == "%" {
		if s, ok := strOf(l); ok {
			return st.percentFormat(s, r, line)
		}
	}
	li, lInt := toInt(l)
	ri, rInt := toInt(r)
	if lInt && rInt {
		switch op {
		case "+":
			return li + ri
		case "-":
			return li - ri
		case "*":
			return li * ri
		case "/":
			if ri == 0 {
				st.fail(line, "ZeroDivisionError: division by zero")
			}
			return float64(li) / float64(ri)
		case "//":
			if ri == 0 {
				st.fail(line, "ZeroDivisionError: integer division or modulo by zero")
			}
			q := li / ri
			if (li%ri != 0) && ((li < 0) != (ri < 0)) {
				q--
			}
			return q
		case "%":
			if ri == 0 {
				st.fail(line, "ZeroDivisionError: integer division or modulo by zero")
			}
			m := li % ri
			if m != 0 && ((m < 0) != (ri < 0)) {
				m += ri
			}
			return m
		case "**":
			if ri < 0 {
				return math.Pow(float64(li), float64(ri))
			}
			if ri > 64 && li != 0 && li != 1 && li != -1 {
				return math.Pow(float64(li), float64(ri))
			}
			res := int64(1)
			for range ri {
				res *= li
			}
			return res
		}
	}
	lf, lNum := toFloat(l)
	rf, rNum := toFloat(r)
	if lNum && rNum {
		switch op {
		case "+":
			return lf + rf
		case "-":
			return lf - rf
		case "*":
			return lf * rf
		case "/":
			if rf == 0 {
				st.fail(line, "ZeroDivisionError: float division by zero")
			}
			return lf / rf
		case "//":
			if rf == 0 {
				st.fail(line, "ZeroDivisionError: float floor division by zero")
			}
			return math.Floor(lf / rf)
		case "%":
			if rf == 0 {
				st.fail(line, "ZeroDivisionError: float modulo")
			}
			m := math.Mod(lf, rf)
			if m != 0 && ((m < 0) != (rf < 0)) {
				m += rf
			}
			return m
		case "**":
			return math.Pow(lf, rf)
		}
	}
	if op == "+" && isString(l) {
		st.fail(line, "TypeError: can only concatenate str (not \"%s\") to str", typeName(r))
	}
	st.fail(line, "TypeError: unsupported operand type(s) for %s: '%s' and '%s'", op, typeName(l), typeName(r))
	return nil
}

func repeatArgs(l, r any) (string, int64, bool) {
	if s, ok := strOf(l); ok {
		if n, ok := toInt(r); ok {
			return s, n, true
		}
	}
	if s, ok := strOf(r); ok {
		if n, ok := toInt(l); ok {
			return s, n, true
		}
	}
	return "", 0, false
}

// getattr is obj.name: Python's attribute (a method) first, then the item.
func (st *state) getattr(obj any, name string, line int) any {
	if u, ok := obj.(*undefined); ok {
		st.failUndefined(line, u)
	}
	if v, ok := st.attribute(obj, name, line); ok {
		return v
	}
	if v, ok := st.item(obj, name); ok {
		return v
	}
	return &undefined{name: name, obj: obj, hasObj: true}
}

// getitem is obj[key]: the item first, then (for a string key) the attribute.
func (st *state) getitem(obj, key any, line int) any {
	if u, ok := obj.(*undefined); ok {
		st.failUndefined(line, u)
	}
	if v, ok := st.item(obj, key); ok {
		return v
	}
	if s, ok := key.(string); ok {
		if v, ok := st.attribute(obj, s, line); ok {
			return v
		}
	}
	return &undefined{name: key, obj: obj, hasObj: true}
}

func (st *state) item(obj, key any) (any, bool) {
	switch o := obj.(type) {
	case *dict:
		return o.get(key)
	case *namespace:
		return nil, false
	case *list:
		if o.kind == kGen || o.kind == kItems || o.kind == kKeys || o.kind == kValues {
			return nil, false
		}
		i, ok := toInt(key)
		if !ok || isBool(key) && false {
			return nil, false
		}
		if i < 0 {
			i += int64(len(o.items))
		}
		if i < 0 || i >= int64(len(o.items)) {
			return nil, false
		}
		return o.items[i], true
	case string, markup:
		s, _ := strOf(o)
		i, ok := toInt(key)
		if !ok {
			return nil, false
		}
		n := int64(utf8.RuneCountInString(s))
		if i < 0 {
			i += n
		}
		if i < 0 || i >= n {
			return nil, false
		}
		rs := []rune(s)
		if _, m := o.(markup); m {
			return markup(rs[i]), true
		}
		return string(rs[i]), true
	case *loopInfo:
		if s, ok := key.(string); ok {
			return o.attr(s)
		}
	}
	return nil, false
}

func isBool(v any) bool { _, ok := v.(bool); return ok }

func (st *state) slice(n *sliceExpr, sc *scope) any {
	obj := st.eval(n.obj, sc)
	if u, ok := obj.(*undefined); ok {
		st.failUndefined(n.ln, u)
	}
	bound := func(x expr) (int64, bool) {
		if x == nil {
			return 0, false
		}
		v := st.eval(x, sc)
		if v == nil {
			return 0, false
		}
		i, ok := toInt(v)
		if !ok {
			st.fail(n.ln, "TypeError: slice indices must be integers or None")
		}
		return i, true
	}
	start, hasStart := bound(n.start)
	stop, hasStop := bound(n.stop)
	step, hasStep := bound(n.step)
	if !hasStep {
		step = 1
	}
	if step == 0 {
		st.fail(n.ln, "ValueError: slice step cannot be zero")
	}
	var items []any
	var isStr, isMarkup bool
	switch o := obj.(type) {
	case string:
		items, isStr = runes(o), true
	case markup:
		items, isStr, isMarkup = runes(string(o)), true, true
	case *list:
		if o.kind != kList && o.kind != kTuple {
			st.fail(n.ln, "TypeError: '%s' object is not subscriptable", typeName(obj))
		}
		items = o.items
	default:
		st.fail(n.ln, "TypeError: '%s' object is not subscriptable", typeName(obj))
	}
	ln := int64(len(items))
	norm := func(i int64, has bool, def int64) int64 {
		if !has {
			return def
		}
		if i < 0 {
			i += ln
			if i < 0 {
				if step < 0 {
					return -1
				}
				return 0
			}
		}
		if i >= ln {
			if step < 0 {
				return ln - 1
			}
			return ln
		}
		return i
	}
	var out []any
	if step > 0 {
		for i := norm(start, hasStart, 0); i < norm(stop, hasStop, ln); i += step {
			out = append(out, items[i])
		}
	} else {
		for i := norm(start, hasStart, ln-1); i > norm(stop, hasStop, -1); i += step {
			out = append(out, items[i])
		}
	}
	if isStr {
		var b strings.Builder
		for _, r := range out {
			b.WriteString(r.(string))
		}
		if isMarkup {
			return markup(b.String())
		}
		return b.String()
	}
	l := obj.(*list)
	return &list{items: out, kind: l.kind}
}

// call calls fn (a macro or a built-in) with Python's argument rules.
func (st *state) call(fn any, line int, args []any, kw *dict) any {
	switch f := fn.(type) {
	case *macro:
		if f.unsafe {
			st.fail(line, "SecurityError: access to attribute '%s' of '%s' object is unsafe.", f.name, typeName(f.self))
		}
		if f.def != nil {
			return st.callMacro(f, line, args, kw)
		}
		return f.fn(st, line, args, kw)
	case *loopInfo:
		if f.recurse != nil && len(args) == 1 {
			return f.recurse(st, args[0])
		}
	case *undefined:
		st.failUndefined(line, f)
	}
	st.fail(line, "TypeError: '%s' object is not callable", typeName(fn))
	return nil
}

func (st *state) callMacro(m *macro, line int, args []any, kw *dict) any {
	st.step(line)
	st.depth++
	defer func() { st.depth-- }()
	if st.depth > maxDepth {
		st.failLimit(line, "RecursionError: macros nested deeper than %d calls", maxDepth)
	}
	d := m.def
	sc := child(m.scope)
	nDefaults := len(d.defaults)
	var varargs []any
	for i, p := range d.params {
		switch {
		case i < len(args):
			sc.set(p, args[i])
		default:
			if kw != nil {
				if v, ok := kw.get(p); ok {
					sc.set(p, v)
					continue
				}
			}
			if di := i - (len(d.params) - nDefaults); di >= 0 {
				sc.set(p, st.eval(d.defaults[di], sc))
			} else {
				sc.set(p, &undefined{name: p, hint: fmt.Sprintf("parameter '%s' was not provided", p)})
			}
		}
	}
	if len(args) > len(d.params) {
		varargs = args[len(d.params):]
	}
	extra := newDict()
	if kw != nil {
		for i, k := range kw.keys {
			name, _ := k.(string)
			found := false
			for _, p := range d.params {
				found = found || p == name
			}
			if !found {
				if name == "caller" {
					sc.set("caller", kw.vals[i])
					continue
				}
				extra.set(k, kw.vals[i])
			}
		}
	}
	if len(varargs) > 0 && !usesName(d.body, "varargs") {
		st.fail(line, "TypeError: macro '%s' takes not more than %d argument(s)", d.name, len(d.params))
	}
	if len(extra.keys) > 0 && !usesName(d.body, "kwargs") {
		st.fail(line, "TypeError: macro '%s' takes no keyword argument '%s'", d.name, pyStr(extra.keys[0]))
	}
	sc.set("varargs", newTuple(varargs...))
	sc.set("kwargs", extra)
	if m.caller != nil {
		sc.set("caller", m.caller)
	}
	return st.capture(d.body, sc)
}

// maxDepth bounds macro recursion (Python's recursion limit ends
// Jinja2's a little deeper).
const maxDepth = 200

// usesName reports whether body mentions the variable name anywhere.
func usesName(body []stmt, name string) bool {
	found := false
	var visitX func(x expr)
	var visitS func(ss []stmt)
	visitArgs := func(a callArgs) {
		for _, x := range a.args {
			visitX(x)
		}
		for _, x := range a.kwVal {
			visitX(x)
		}
		visitX(a.star)
		visitX(a.kwStar)
	}
	visitX = func(x expr) {
		switch n := x.(type) {
		case nil:
		case *nameExpr:
			found = found || n.name == name
		case *listExpr:
			for _, it := range n.items {
				visitX(it)
			}
		case *dictExpr:
			for i := range n.keys {
				visitX(n.keys[i])
				visitX(n.vals[i])
			}
		case *getattrExpr:
			visitX(n.obj)
		case *getitemExpr:
			visitX(n.obj)
			visitX(n.key)
		case *sliceExpr:
			visitX(n.obj)
			visitX(n.start)
			visitX(n.stop)
			visitX(n.step)
		case *callExpr:
			visitX(n.fn)
			visitArgs(n.callArgs)
		case *filterExpr:
			visitX(n.x)
			visitArgs(n.callArgs)
		case *testExpr:
			visitX(n.x)
			visitArgs(n.callArgs)
		case *unaryExpr:
			visitX(n.x)
		case *binExpr:
			visitX(n.l)
			visitX(n.r)
		case *compareExpr:
			visitX(n.first)
			for _, r := range n.rest {
				visitX(r)
			}
		case *condExpr:
			visitX(n.test)
			visitX(n.then)
			visitX(n.els)
		}
	}
	visitS = func(ss []stmt) {
		for _, s := range ss {
			switch n := s.(type) {
			case *outputStmt:
				visitX(n.x)
			case *ifStmt:
				for i, c := range n.conds {
					visitX(c)
					visitS(n.bodies[i])
				}
				visitS(n.els)
			case *forStmt:
				visitX(n.iter)
				visitX(n.filter)
				visitS(n.body)
				visitS(n.els)
			case *setStmt:
				visitX(n.x)
			case *setBlockStmt:
				visitS(n.body)
			case *callBlockStmt:
				visitX(n.call)
				visitS(n.caller.body)
			case *filterBlockStmt:
				visitS(n.body)
			}
		}
	}
	visitS(body)
	return found
}

func (l *loopInfo) attr(name string) (any, bool) {
	n := len(l.items)
	switch name {
	case "index":
		return int64(l.index + 1), true
	case "index0":
		return int64(l.index), true
	case "revindex":
		return int64(n - l.index), true
	case "revindex0":
		return int64(n - l.index - 1), true
	case "first":
		return l.index == 0, true
	case "last":
		return l.index == n-1, true
	case "length":
		return int64(n), true
	case "depth":
		return int64(l.depth + 1), true
	case "depth0":
		return int64(l.depth), true
	case "previtem":
		if l.index == 0 {
			return &undefined{name: "previtem", hint: "there is no previous item"}, true
		}
		return l.items[l.index-1], true
	case "nextitem":
		if l.index == n-1 {
			return &undefined{name: "nextitem", hint: "there is no next item"}, true
		}
		return l.items[l.index+1], true
	case "cycle":
		return &macro{name: "cycle", fn: func(st *state, line int, args []any, kw *dict) any {
			if len(args) == 0 {
				st.fail(line, "TypeError: no items for cycling given")
			}
			return args[l.index%len(args)]
		}}, true
	case "changed":
		return &macro{name: "changed", fn: func(st *state, line int, args []any, kw *dict) any {
			v := newTuple(args...)
			if l.changed && equal(v, l.lastVal) {
				return false
			}
			l.changed, l.lastVal = true, v
			return true
		}}, true
	}
	return nil, false
}
