package jinja

import (
	"math"
	"strconv"
	"strings"
	"unicode"
)

// filterFunc is a filter: v is the value on the filter's left.
type filterFunc func(st *state, line int, v any, args []any, kw *dict) any

// testFunc is a test (x is name(args)).
type testFunc func(st *state, line int, v any, args []any, kw *dict) bool

func (st *state) applyFilter(f *filterExpr, v any, sc *scope) any {
	fn, ok := st.filters[f.name]
	if !ok {
		st.fail(f.ln, "TemplateRuntimeError: No filter named '%s' found.", f.name)
	}
	args, kw := st.evalArgs(f.callArgs, sc, f.ln)
	return fn(st, f.ln, v, args, kw)
}

func (st *state) applyTest(t *testExpr, v any, sc *scope) any {
	fn, ok := st.tests[t.name]
	if !ok {
		st.fail(t.ln, "TemplateRuntimeError: No test named '%s' found.", t.name)
	}
	args, kw := st.evalArgs(t.callArgs, sc, t.ln)
	return fn(st, t.ln, v, args, kw)
}

// softStr is Jinja2's soft_str: Markup stays Markup, anything else is str().
func softStr(v any) any {
	if m, ok := v.(markup); ok {
		return m
	}
	return pyStr(v)
}

// sameKind wraps r as Markup when v was Markup.
func sameKind(v any, r string) any {
	if _, ok := v.(markup); ok {
		return markup(r)
	}
	return r
}

func (st *state) mustIterate(line int, v any) []any {
	items, ok := iterate(v)
	if !ok {
		st.fail(line, "TypeError: '%s' object is not iterable", typeName(v))
	}
	return items
}

// attrGetter is Jinja2's make_attrgetter: "a.b.0" looks up a, then b,
// then item 0.
func (st *state) attrGetter(line int, attr any, def any, hasDef bool) func(any) any {
	var parts []any
	if s, ok := attr.(string); ok {
		for _, p := range strings.Split(s, ".") {
			if n, err := strconv.ParseInt(p, 10, 64); err == nil {
				parts = append(parts, n)
			} else {
				parts = append(parts, p)
			}
		}
	} else {
		parts = []any{attr}
	}
	return func(v any) any {
		for _, p := range parts {
			v = st.getitem(v, p, line)
		}
		if hasDef && isUndefined(v) {
			return def
		}
		return v
	}
}

func lowerKey(caseSensitive bool) func(any) any {
	return func(v any) any {
		if s, ok := v.(string); ok && !caseSensitive {
			return strings.ToLower(s)
		}
		return v
	}
}

var builtinFilters map[string]filterFunc

func init() {
	builtinFilters = map[string]filterFunc{
		"abs": func(st *state, line int, v any, args []any, kw *dict) any {
			switch x := v.(type) {
			case bool:
				n, _ := toInt(x)
				return n
			case int64:
				return abs64(x)
			case float64:
				return math.Abs(x)
			}
			st.fail(line, "TypeError: bad operand type for abs(): '%s'", typeName(v))
			return nil
		},
		"attr": func(st *state, line int, v any, args []any, kw *dict) any {
			b := st.bind(line, "attr", args, kw, []string{"name"}, 1)
			name, _ := strOf(b.vals[0])
			if r, ok := st.attribute(v, name, line); ok {
				return r
			}
			return &undefined{name: name, obj: v, hasObj: true}
		},
		"batch": func(st *state, line int, v any, args []any, kw *dict) any {
			b := st.bind(line, "batch", args, kw, []string{"linecount", "fill_with"}, 1)
			n, _ := toInt(b.vals[0])
			if n <= 0 {
				st.fail(line, "ValueError: batch size must be positive")
			}
			var out []any
			var cur []any
			for _, it := range st.mustIterate(line, v) {
				cur = append(cur, it)
				if int64(len(cur)) == n {
					out = append(out, newList(cur))
					cur = nil
				}
			}
			if len(cur) > 0 {
				if b.has[1] {
					for int64(len(cur)) < n {
						cur = append(cur, b.vals[1])
					}
				}
				out = append(out, newList(cur))
			}
			return newGen(out)
		},
		"capitalize": func(st *state, line int, v any, args []any, kw *dict) any {
			return sameKind(v, pyCapitalize(pyStr(v)))
		},
		"center": func(st *state, line int, v any, args []any, kw *dict) any {
			b := st.bind(line, "center", args, kw, []string{"width"}, 0)
			m, _ := strMethod(pyStr(v), pyStr(v), "center")
			return st.call(m, line, []any{b.get(0, int64(80))}, nil)
		},
		"count":   filterLength,
		"d":       filterDefault,
		"default": filterDefault,
		"dictsort": func(st *state, line int, v any, args []any, kw *dict) any {
			b := st.bind(line, "dictsort", args, kw, []string{"case_sensitive", "by", "reverse"}, 0)
			d, ok := v.(*dict)
			if !ok {
				if u, isU := v.(*undefined); isU {
					st.failUndefined(line, u)
				}
				st.fail(line, "AttributeError: '%s' object has no attribute 'items'", typeName(v))
			}
			pos := 0
			if by, _ := strOf(b.get(1, "key")); by == "value" {
				pos = 1
			} else if by != "key" {
				st.fail(line, "FilterArgumentError: You can only sort by either \"key\" or \"value\"")
			}
			items := make([]any, len(d.keys))
			for i, k := range d.keys {
				items[i] = newTuple(k, d.vals[i])
			}
			cs := lowerKey(truthy(b.get(0, false)))
			if !sortValues(items, func(x any) any { return cs(x.(*list).items[pos]) }, truthy(b.get(2, false))) {
				st.fail(line, "TypeError: '<' not supported between the dict's keys")
			}
			return newList(items)
		},
		"e":           filterEscape,
		"escape":      filterEscape,
		"forceescape": func(st *state, line int, v any, args []any, kw *dict) any { return markup(escapeHTML(pyStr(v))) },
		"first": func(st *state, line int, v any, args []any, kw *dict) any {
			items := st.mustIterate(line, v)
			if len(items) == 0 {
				return &undefined{name: "first", hint: "No first item, sequence was empty."}
			}
			return items[0]
		},
		"last": func(st *state, line int, v any, args []any, kw *dict) any {
			if l, ok := v.(*list); ok && l.kind == kGen {
				st.fail(line, "TypeError: 'generator' object is not reversible")
			}
			items := st.mustIterate(line, v)
			if len(items) == 0 {
				return &undefined{name: "last", hint: "No last item, sequence was empty."}
			}
			return items[len(items)-1]
		},
		"float": func(st *state, line int, v any, args []any, kw *dict) any {
			b := st.bind(line, "float", args, kw, []string{"default"}, 0)
			switch x := v.(type) {
			case bool, int64, float64:
				f, _ := toFloat(x)
				return f
			case string, markup:
				s, _ := strOf(x)
				if f, err := strconv.ParseFloat(strings.ReplaceAll(strings.TrimFunc(s, isSpace), "_", ""), 64); err == nil {
					return f
				}
			}
			return b.get(0, 0.0)
		},
		"format": func(st *state, line int, v any, args []any, kw *dict) any {
			s := pyStr(v)
			if kw != nil && len(kw.keys) > 0 {
				return st.percentFormat(s, kw, line)
			}
			return st.percentFormat(s, newTuple(args...), line)
		},
		"indent": func(st *state, line int, v any, args []any, kw *dict) any {
			b := st.bind(line, "indent", args, kw, []string{"width", "first", "blank"}, 0)
			ind := "    "
			switch w := b.get(0, int64(4)).(type) {
			case string:
				ind = w
			default:
				n, _ := toInt(w)
				ind = strings.Repeat(" ", int(max(0, min(n, 1<<20))))
			}
			s := pyStr(v) + "\n"
			m, _ := strMethod(s, s, "splitlines")
			lines := st.call(m, line, nil, nil).(*list).items
			var rv string
			if truthy(b.get(2, false)) {
				parts := make([]string, len(lines))
				for i, l := range lines {
					parts[i] = l.(string)
				}
				rv = strings.Join(parts, "\n"+ind)
			} else {
				rv = lines[0].(string)
				for _, l := range lines[1:] {
					rv += "\n"
					if l.(string) != "" {
						rv += ind
					}
					rv += l.(string)
				}
			}
			if truthy(b.get(1, false)) {
				rv = ind + rv
			}
			st.checkSize(line, len(rv))
			return sameKind(v, rv)
		},
		"int": func(st *state, line int, v any, args []any, kw *dict) any {
			b := st.bind(line, "int", args, kw, []string{"default", "base"}, 0)
			def := b.get(0, int64(0))
			switch x := v.(type) {
			case bool, int64:
				n, _ := toInt(x)
				return n
			case float64:
				if math.IsNaN(x) || math.IsInf(x, 0) {
					return def
				}
				return int64(x)
			case string, markup:
				s, _ := strOf(x)
				s = strings.ReplaceAll(strings.TrimFunc(s, isSpace), "_", "")
				base, _ := toInt(b.get(1, int64(10)))
				if n, err := strconv.ParseInt(s, int(base), 64); err == nil {
					return n
				}
				if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
					return int64(f)
				}
				return def
			case *undefined:
				st.failUndefined(line, x)
			}
			return def
		},
		"items": func(st *state, line int, v any, args []any, kw *dict) any {
			switch d := v.(type) {
			case *undefined:
				return newGen(nil)
			case *dict:
				items := make([]any, len(d.keys))
				for i, k := range d.keys {
					items[i] = newTuple(k, d.vals[i])
				}
				return newGen(items)
			}
			st.fail(line, "TypeError: Can only get item pairs from a mapping.")
			return nil
		},
		"join": func(st *state, line int, v any, args []any, kw *dict) any {
			b := st.bind(line, "join", args, kw, []string{"d", "attribute"}, 0)
			items := st.mustIterate(line, v)
			if b.has[1] && b.vals[1] != nil {
				get := st.attrGetter(line, b.vals[1], nil, false)
				mapped := make([]any, len(items))
				for i, it := range items {
					mapped[i] = get(it)
				}
				items = mapped
			}
			sep := pyStr(b.get(0, ""))
			parts := make([]string, len(items))
			total := 0
			for i, it := range items {
				parts[i] = pyStr(it)
				total += len(parts[i]) + len(sep)
			}
			st.checkSize(line, total)
			return strings.Join(parts, sep)
		},
		"length": filterLength,
		"list": func(st *state, line int, v any, args []any, kw *dict) any {
			return newList(append([]any(nil), st.mustIterate(line, v)...))
		},
		"lower": func(st *state, line int, v any, args []any, kw *dict) any {
			return sameKind(v, strings.ToLower(pyStr(v)))
		},
		"upper": func(st *state, line int, v any, args []any, kw *dict) any {
			return sameKind(v, strings.ToUpper(pyStr(v)))
		},
		"map": func(st *state, line int, v any, args []any, kw *dict) any {
			if !truthy(v) { // Jinja2's do_map: a false value maps to nothing
				return newGen(nil)
			}
			items := st.mustIterate(line, v)
			out := make([]any, len(items))
			if len(args) == 0 && kw != nil {
				b := st.bind(line, "map", nil, kw, []string{"attribute", "default"}, 1)
				get := st.attrGetter(line, b.vals[0], b.get(1, nil), b.has[1])
				for i, it := range items {
					out[i] = get(it)
				}
				return newGen(out)
			}
			if len(args) == 0 {
				st.fail(line, "FilterArgumentError: map requires a filter argument")
			}
			name, _ := strOf(args[0])
			fn, ok := st.filters[name]
			if !ok {
				st.fail(line, "TemplateRuntimeError: No filter named '%s'.", name)
			}
			for i, it := range items {
				out[i] = fn(st, line, it, args[1:], kw)
			}
			return newGen(out)
		},
		"max": func(st *state, line int, v any, args []any, kw *dict) any { return st.minMax(line, v, args, kw, true) },
		"min": func(st *state, line int, v any, args []any, kw *dict) any { return st.minMax(line, v, args, kw, false) },
		"reject": func(st *state, line int, v any, args []any, kw *dict) any {
			return st.selectOrReject(line, v, args, kw, false, false)
		},
		"rejectattr": func(st *state, line int, v any, args []any, kw *dict) any {
			return st.selectOrReject(line, v, args, kw, false, true)
		},
		"select": func(st *state, line int, v any, args []any, kw *dict) any {
			return st.selectOrReject(line, v, args, kw, true, false)
		},
		"selectattr": func(st *state, line int, v any, args []any, kw *dict) any {
			return st.selectOrReject(line, v, args, kw, true, true)
		},
		"replace": func(st *state, line int, v any, args []any, kw *dict) any {
			b := st.bind(line, "replace", args, kw, []string{"old", "new", "count"}, 2)
			s := pyStr(v)
			m, _ := strMethod(s, s, "replace")
			cargs := []any{pyStr(b.vals[0]), pyStr(b.vals[1])}
			if b.has[2] && b.vals[2] != nil {
				cargs = append(cargs, b.vals[2])
			}
			return st.call(m, line, cargs, nil)
		},
		"reverse": func(st *state, line int, v any, args []any, kw *dict) any {
			if s, ok := strOf(v); ok {
				rs := []rune(s)
				for i, j := 0, len(rs)-1; i < j; i, j = i+1, j-1 {
					rs[i], rs[j] = rs[j], rs[i]
				}
				return sameKind(v, string(rs))
			}
			items := append([]any(nil), st.mustIterate(line, v)...)
			for i, j := 0, len(items)-1; i < j; i, j = i+1, j-1 {
				items[i], items[j] = items[j], items[i]
			}
			return newGen(items)
		},
		"round": func(st *state, line int, v any, args []any, kw *dict) any {
			b := st.bind(line, "round", args, kw, []string{"precision", "method"}, 0)
			f, ok := toFloat(v)
			if !ok {
				st.fail(line, "TypeError: type %s doesn't define __round__ method", typeName(v))
			}
			p, _ := toInt(b.get(0, int64(0)))
			scale := math.Pow(10, float64(p))
			switch m, _ := strOf(b.get(1, "common")); m {
			case "common":
				return math.RoundToEven(f*scale) / scale
			case "ceil":
				return math.Ceil(f*scale) / scale
			case "floor":
				return math.Floor(f*scale) / scale
			}
			st.fail(line, "FilterArgumentError: method must be common, ceil or floor")
			return nil
		},
		"safe": func(st *state, line int, v any, args []any, kw *dict) any {
			if m, ok := v.(markup); ok {
				return m
			}
			return markup(pyStr(v))
		},
		"sort": func(st *state, line int, v any, args []any, kw *dict) any {
			b := st.bind(line, "sort", args, kw, []string{"reverse", "case_sensitive", "attribute"}, 0)
			items := append([]any(nil), st.mustIterate(line, v)...)
			key := lowerKey(truthy(b.get(1, false)))
			if b.has[2] && b.vals[2] != nil {
				get := st.attrGetter(line, b.vals[2], nil, false)
				k := key
				key = func(x any) any { return k(get(x)) }
			}
			if !sortValues(items, key, truthy(b.get(0, false))) {
				st.fail(line, "TypeError: '<' not supported between the items")
			}
			return newList(items)
		},
		"string": func(st *state, line int, v any, args []any, kw *dict) any { return softStr(v) },
		"sum": func(st *state, line int, v any, args []any, kw *dict) any {
			b := st.bind(line, "sum", args, kw, []string{"attribute", "start"}, 0)
			items := st.mustIterate(line, v)
			if b.has[0] && b.vals[0] != nil {
				get := st.attrGetter(line, b.vals[0], nil, false)
				for i, it := range items {
					items[i] = get(it)
				}
			}
			total := b.get(1, int64(0))
			for _, it := range items {
				total = st.binop("+", total, it, line)
			}
			return total
		},
		"title": func(st *state, line int, v any, args []any, kw *dict) any {
			s := pyStr(v)
			var b strings.Builder
			start := true
			for _, r := range s {
				if isSpace(r) || strings.ContainsRune("-({[<", r) {
					b.WriteRune(r)
					start = true
					continue
				}
				if start {
					b.WriteRune(unicode.ToUpper(r))
				} else {
					b.WriteRune(unicode.ToLower(r))
				}
				start = false
			}
			return sameKind(v, b.String())
		},
		"tojson": func(st *state, line int, v any, args []any, kw *dict) any {
			b := st.bind(line, "tojson", args, kw, []string{"ensure_ascii", "indent", "separators", "sort_keys"}, 0)
			o := jsonOptions{ensureASCII: truthy(b.get(0, false)), sortKeys: truthy(b.get(3, false)), itemSep: ", ", keySep: ": "}
			if ind := b.get(1, nil); ind != nil {
				var s string
				if t, ok := strOf(ind); ok {
					s = t
				} else if n, ok := toInt(ind); ok {
					s = strings.Repeat(" ", int(max(0, min(n, 1<<10))))
				} else {
					st.fail(line, "TypeError: indent must be an int or a str")
				}
				o.indent, o.itemSep = &s, ","
			}
			if sep := b.get(2, nil); sep != nil {
				l, ok := sep.(*list)
				if !ok || len(l.items) != 2 {
					st.fail(line, "ValueError: separators must be an (item_separator, key_separator) pair")
				}
				o.itemSep, o.keySep = pyStr(l.items[0]), pyStr(l.items[1])
			}
			out, err := toJSON(v, o)
			if err != nil {
				st.fail(line, "%s", err.Error())
			}
			st.checkSize(line, len(out))
			return out
		},
		"trim": func(st *state, line int, v any, args []any, kw *dict) any {
			b := st.bind(line, "trim", args, kw, []string{"chars"}, 0)
			return sameKind(v, pyStrip(pyStr(v), b.get(0, nil), true, true))
		},
		"truncate": func(st *state, line int, v any, args []any, kw *dict) any {
			b := st.bind(line, "truncate", args, kw, []string{"length", "killwords", "end", "leeway"}, 0)
			s := pyStr(v)
			n, _ := toInt(b.get(0, int64(255)))
			end := pyStr(b.get(2, "..."))
			leeway, _ := toInt(b.get(3, int64(5)))
			rs := []rune(s)
			if int64(len(rs)) <= n+leeway {
				return s
			}
			cut := max(0, n-int64(len([]rune(end))))
			if truthy(b.get(1, false)) {
				return string(rs[:cut]) + end
			}
			head := string(rs[:cut])
			if i := strings.LastIndex(head, " "); i >= 0 {
				head = head[:i]
			}
			return head + end
		},
		"unique": func(st *state, line int, v any, args []any, kw *dict) any {
			b := st.bind(line, "unique", args, kw, []string{"case_sensitive", "attribute"}, 0)
			key := lowerKey(truthy(b.get(0, false)))
			if b.has[1] && b.vals[1] != nil {
				get := st.attrGetter(line, b.vals[1], nil, false)
				k := key
				key = func(x any) any { return k(get(x)) }
			}
			seen := newDict()
			var out []any
			for _, it := range st.mustIterate(line, v) {
				k := key(it)
				if _, ok := seen.get(k); ok {
					continue
				}
				if !seen.set(k, true) {
					st.fail(line, "TypeError: unhashable type: '%s'", typeName(k))
				}
				out = append(out, it)
			}
			return newGen(out)
		},
		"wordcount": func(st *state, line int, v any, args []any, kw *dict) any {
			n := int64(0)
			in := false
			for _, r := range pyStr(v) {
				w := r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)
				if w && !in {
					n++
				}
				in = w
			}
			return n
		},
	}
}

func filterLength(st *state, line int, v any, args []any, kw *dict) any {
	n, ok := length(v)
	if !ok {
		st.fail(line, "TypeError: object of type '%s' has no len()", typeName(v))
	}
	return int64(n)
}

func filterDefault(st *state, line int, v any, args []any, kw *dict) any {
	b := st.bind(line, "default", args, kw, []string{"default_value", "boolean"}, 0)
	if isUndefined(v) || (truthy(b.get(1, false)) && !truthy(v)) {
		return b.get(0, "")
	}
	return v
}

func filterEscape(st *state, line int, v any, args []any, kw *dict) any { return toMarkup(v) }

func (st *state) minMax(line int, v any, args []any, kw *dict, isMax bool) any {
	b := st.bind(line, "max", args, kw, []string{"case_sensitive", "attribute"}, 0)
	items := st.mustIterate(line, v)
	if len(items) == 0 {
		return &undefined{name: "max", hint: "No aggregated item, sequence was empty."}
	}
	key := lowerKey(truthy(b.get(0, false)))
	if b.has[1] && b.vals[1] != nil {
		get := st.attrGetter(line, b.vals[1], nil, false)
		k := key
		key = func(x any) any { return k(get(x)) }
	}
	best := items[0]
	for _, it := range items[1:] {
		l, ok := less(key(best), key(it))
		if !ok {
			st.fail(line, "TypeError: '<' not supported between instances of '%s' and '%s'", typeName(best), typeName(it))
		}
		g, _ := less(key(it), key(best))
		if isMax && l || !isMax && g {
			best = it
		}
	}
	return best
}

// selectOrReject is select, reject, selectattr and rejectattr.
func (st *state) selectOrReject(line int, v any, args []any, kw *dict, keep, byAttr bool) any {
	if !truthy(v) { // Jinja2's select_or_reject: a false value selects nothing
		return newGen(nil)
	}
	items := st.mustIterate(line, v)
	get := func(x any) any { return x }
	if byAttr {
		if len(args) == 0 {
			st.fail(line, "FilterArgumentError: Missing parameter for attribute name")
		}
		get = st.attrGetter(line, args[0], nil, false)
		args = args[1:]
	}
	test := func(x any) bool { return truthy(x) }
	if len(args) > 0 {
		name, _ := strOf(args[0])
		fn, ok := st.tests[name]
		if !ok {
			st.fail(line, "TemplateRuntimeError: No test named '%s'.", name)
		}
		targs := args[1:]
		test = func(x any) bool { return fn(st, line, x, targs, kw) }
	}
	var out []any
	for _, it := range items {
		st.step(line)
		if test(get(it)) == keep {
			out = append(out, it)
		}
	}
	return newGen(out)
}

var builtinTests map[string]testFunc

func init() {
	cmp := func(op string) testFunc {
		return func(st *state, line int, v any, args []any, kw *dict) bool {
			b := st.bind(line, op, args, kw, []string{"other"}, 1)
			return st.compare(op, v, b.vals[0], line)
		}
	}
	builtinTests = map[string]testFunc{
		"boolean":  func(st *state, line int, v any, args []any, kw *dict) bool { return isBool(v) },
		"callable": func(st *state, line int, v any, args []any, kw *dict) bool { _, ok := v.(*macro); return ok },
		"defined":  func(st *state, line int, v any, args []any, kw *dict) bool { return !isUndefined(v) },
		"undefined": func(st *state, line int, v any, args []any, kw *dict) bool {
			return isUndefined(v)
		},
		"divisibleby": func(st *state, line int, v any, args []any, kw *dict) bool {
			b := st.bind(line, "divisibleby", args, kw, []string{"num"}, 1)
			return equal(st.binop("%", v, b.vals[0], line), int64(0))
		},
		"escaped": func(st *state, line int, v any, args []any, kw *dict) bool { _, ok := v.(markup); return ok },
		"even": func(st *state, line int, v any, args []any, kw *dict) bool {
			return equal(st.binop("%", v, int64(2), line), int64(0))
		},
		"odd": func(st *state, line int, v any, args []any, kw *dict) bool {
			return equal(st.binop("%", v, int64(2), line), int64(1))
		},
		"false": func(st *state, line int, v any, args []any, kw *dict) bool { return v == false },
		"true":  func(st *state, line int, v any, args []any, kw *dict) bool { return v == true },
		"filter": func(st *state, line int, v any, args []any, kw *dict) bool {
			s, _ := strOf(v)
			_, ok := st.filters[s]
			return ok
		},
		"test": func(st *state, line int, v any, args []any, kw *dict) bool {
			s, _ := strOf(v)
			_, ok := st.tests[s]
			return ok
		},
		"float": func(st *state, line int, v any, args []any, kw *dict) bool { _, ok := v.(float64); return ok },
		"integer": func(st *state, line int, v any, args []any, kw *dict) bool {
			_, ok := v.(int64)
			return ok
		},
		"number": func(st *state, line int, v any, args []any, kw *dict) bool { return isNumber(v) },
		"none":   func(st *state, line int, v any, args []any, kw *dict) bool { return v == nil },
		"lower": func(st *state, line int, v any, args []any, kw *dict) bool {
			return strPredicate(pyStr(v), "islower")
		},
		"upper": func(st *state, line int, v any, args []any, kw *dict) bool {
			return strPredicate(pyStr(v), "isupper")
		},
		"string":  func(st *state, line int, v any, args []any, kw *dict) bool { return isString(v) },
		"mapping": func(st *state, line int, v any, args []any, kw *dict) bool { _, ok := v.(*dict); return ok },
		"sequence": func(st *state, line int, v any, args []any, kw *dict) bool {
			switch x := v.(type) {
			case string, markup, *dict, *undefined:
				return true
			case *list:
				return x.kind != kGen
			}
			return false
		},
		"iterable": func(st *state, line int, v any, args []any, kw *dict) bool {
			switch v.(type) {
			case string, markup, *dict, *list, *undefined:
				return true
			}
			return false
		},
		"sameas": func(st *state, line int, v any, args []any, kw *dict) bool {
			b := st.bind(line, "sameas", args, kw, []string{"other"}, 1)
			o := b.vals[0]
			switch x := v.(type) {
			case nil, bool:
				return v == o
			case *list, *dict, *namespace, *macro:
				return v == o
			case int64:
				y, ok := o.(int64)
				return ok && x == y && x >= -5 && x <= 256 // CPython's small-int cache
			}
			return false
		},
		"in": func(st *state, line int, v any, args []any, kw *dict) bool {
			b := st.bind(line, "in", args, kw, []string{"seq"}, 1)
			return st.contains(b.vals[0], v, line)
		},
		"eq": cmp("=="), "equalto": cmp("=="), "==": cmp("=="),
		"ne": cmp("!="), "!=": cmp("!="),
		"lt": cmp("<"), "lessthan": cmp("<"), "<": cmp("<"),
		"le": cmp("<="), "<=": cmp("<="),
		"gt": cmp(">"), "greaterthan": cmp(">"), ">": cmp(">"),
		"ge": cmp(">="), ">=": cmp(">="),
	}
}
