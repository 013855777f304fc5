package jinja

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// The Python methods templates call on str, dict and list values
// (message.content.strip(), tool.get("name"), d.items()). Methods that
// mutate are refused as the immutable sandbox refuses them, when called.

// argsOf binds a call's positional and keyword arguments to names; a
// missing optional argument is nil with has[i] false.
type boundArgs struct {
	vals []any
	has  []bool
}

func (b boundArgs) get(i int, def any) any {
	if b.has[i] {
		return b.vals[i]
	}
	return def
}

func (st *state) bind(line int, fname string, args []any, kw *dict, names []string, required int) boundArgs {
	b := boundArgs{vals: make([]any, len(names)), has: make([]bool, len(names))}
	if len(args) > len(names) {
		st.fail(line, "TypeError: %s() takes at most %d arguments (%d given)", fname, len(names), len(args))
	}
	for i, a := range args {
		b.vals[i], b.has[i] = a, true
	}
	if kw != nil {
		for i, k := range kw.keys {
			name, _ := k.(string)
			found := false
			for j, n := range names {
				if n == name {
					if b.has[j] {
						st.fail(line, "TypeError: %s() got multiple values for argument '%s'", fname, name)
					}
					b.vals[j], b.has[j], found = kw.vals[i], true, true
				}
			}
			if !found {
				st.fail(line, "TypeError: %s() got an unexpected keyword argument '%s'", fname, name)
			}
		}
	}
	for i := 0; i < required; i++ {
		if !b.has[i] {
			st.fail(line, "TypeError: %s() missing required argument '%s'", fname, names[i])
		}
	}
	return b
}

func method(self any, name string, fn func(st *state, line int, args []any, kw *dict) any) *macro {
	return &macro{name: name, self: self, fn: fn}
}

var unsafeMethods = map[string]map[string]bool{
	"dict": {"clear": true, "pop": true, "popitem": true, "setdefault": true, "update": true},
	"list": {"append": true, "clear": true, "extend": true, "insert": true, "pop": true, "remove": true, "reverse": true, "sort": true},
}

// attribute is Python's getattr(obj, name) for the attributes templates
// use; ok is false when obj has none by that name.
func (st *state) attribute(obj any, name string, line int) (any, bool) {
	switch o := obj.(type) {
	case *namespace:
		return o.attrs.get(name)
	case *loopInfo:
		return o.attr(name)
	case *dict:
		if unsafeMethods["dict"][name] {
			return &macro{name: name, self: o, unsafe: true}, true
		}
		return dictMethod(o, name)
	case *list:
		if o.kind != kList && o.kind != kTuple {
			return nil, false
		}
		if unsafeMethods["list"][name] && o.kind == kList {
			return &macro{name: name, self: o, unsafe: true}, true
		}
		return listMethod(o, name)
	case string:
		return strMethod(o, o, name)
	case markup:
		return strMethod(o, string(o), name)
	}
	return nil, false
}

func dictMethod(d *dict, name string) (any, bool) {
	switch name {
	case "get":
		return method(d, name, func(st *state, line int, args []any, kw *dict) any {
			b := st.bind(line, "get", args, kw, []string{"key", "default"}, 1)
			if v, ok := d.get(b.vals[0]); ok {
				return v
			}
			return b.get(1, nil)
		}), true
	case "items", "keys", "values":
		return method(d, name, func(st *state, line int, args []any, kw *dict) any {
			st.bind(line, name, args, kw, nil, 0)
			switch name {
			case "keys":
				return &list{items: append([]any(nil), d.keys...), kind: kKeys}
			case "values":
				return &list{items: append([]any(nil), d.vals...), kind: kValues}
			}
			items := make([]any, len(d.keys))
			for i, k := range d.keys {
				items[i] = newTuple(k, d.vals[i])
			}
			return &list{items: items, kind: kItems}
		}), true
	case "copy":
		return method(d, name, func(st *state, line int, args []any, kw *dict) any {
			st.bind(line, name, args, kw, nil, 0)
			return d.copy()
		}), true
	}
	return nil, false
}

func listMethod(l *list, name string) (any, bool) {
	switch name {
	case "index", "count":
		return method(l, name, func(st *state, line int, args []any, kw *dict) any {
			b := st.bind(line, name, args, kw, []string{"value"}, 1)
			n := int64(0)
			for i, it := range l.items {
				if equal(it, b.vals[0]) {
					if name == "index" {
						return int64(i)
					}
					n++
				}
			}
			if name == "index" {
				st.fail(line, "ValueError: %s is not in list", pyRepr(b.vals[0]))
			}
			return n
		}), true
	case "copy":
		if l.kind != kList {
			return nil, false
		}
		return method(l, name, func(st *state, line int, args []any, kw *dict) any {
			return newList(append([]any(nil), l.items...))
		}), true
	}
	return nil, false
}

// pyStrip is str.strip(chars) (chars nil: whitespace) on the sides asked.
func pyStrip(s string, chars any, left, right bool) string {
	cut := isSpace
	if c, ok := strOf(chars); ok {
		cut = func(r rune) bool { return strings.ContainsRune(c, r) }
	}
	if left {
		s = strings.TrimLeftFunc(s, cut)
	}
	if right {
		s = strings.TrimRightFunc(s, cut)
	}
	return s
}

// pySplit is str.split(sep, maxsplit) (sep nil: runs of whitespace).
func pySplit(s string, sep any, maxsplit int64) []any {
	var parts []string
	if sp, ok := strOf(sep); ok {
		if maxsplit < 0 {
			parts = strings.Split(s, sp)
		} else {
			parts = strings.SplitN(s, sp, int(maxsplit)+1)
		}
	} else {
		rest := strings.TrimLeftFunc(s, isSpace)
		for rest != "" {
			if maxsplit >= 0 && int64(len(parts)) == maxsplit {
				parts = append(parts, strings.TrimRightFunc(rest, isSpace))
				break
			}
			i := strings.IndexFunc(rest, isSpace)
			if i < 0 {
				parts = append(parts, rest)
				break
			}
			parts = append(parts, rest[:i])
			rest = strings.TrimLeftFunc(rest[i:], isSpace)
		}
	}
	out := make([]any, len(parts))
	for i, p := range parts {
		out[i] = p
	}
	return out
}

// pyRSplit is str.rsplit(sep, maxsplit).
func pyRSplit(s string, sep any, maxsplit int64) []any {
	if maxsplit < 0 {
		return pySplit(s, sep, -1)
	}
	var parts []any
	if sp, ok := strOf(sep); ok {
		for int64(len(parts)) < maxsplit {
			i := strings.LastIndex(s, sp)
			if i < 0 {
				break
			}
			parts = append(parts, s[i+len(sp):])
			s = s[:i]
		}
		parts = append(parts, s)
	} else {
		s = strings.TrimRightFunc(s, isSpace)
		for s != "" && int64(len(parts)) < maxsplit {
			i := strings.LastIndexFunc(s, isSpace)
			if i < 0 {
				break
			}
			_, n := utf8.DecodeRuneInString(s[i:])
			parts = append(parts, s[i+n:])
			s = strings.TrimRightFunc(s[:i], isSpace)
		}
		if s != "" {
			parts = append(parts, s)
		}
	}
	for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
		parts[i], parts[j] = parts[j], parts[i]
	}
	return parts
}

func isLineBreak(r rune) bool {
	switch r {
	case '\n', '\r', '\v', '\f', 0x1c, 0x1d, 0x1e, 0x85, 0x2028, 0x2029:
		return true
	}
	return false
}

func isCased(r rune) bool { return unicode.IsUpper(r) || unicode.IsLower(r) || unicode.IsTitle(r) }

// pyTitle is str.title().
func pyTitle(s string) string {
	var b strings.Builder
	prev := false
	for _, r := range s {
		if prev {
			b.WriteRune(unicode.ToLower(r))
		} else {
			b.WriteRune(unicode.ToTitle(r))
		}
		prev = isCased(r)
	}
	return b.String()
}

// pyCapitalize is str.capitalize().
func pyCapitalize(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 {
		return s
	}
	return string(unicode.ToTitle(r)) + strings.ToLower(s[n:])
}

// runeIndex converts a byte offset in s to a code point index.
func runeIndex(s string, byteOff int) int64 {
	if byteOff < 0 {
		return -1
	}
	return int64(utf8.RuneCountInString(s[:byteOff]))
}

// substr is s[start:end] in code points, Python-style bounds.
func substr(s string, start, end any) string {
	rs := []rune(s)
	n := int64(len(rs))
	norm := func(v any, def int64) int64 {
		i, ok := toInt(v)
		if !ok {
			return def
		}
		if i < 0 {
			i = max(0, i+n)
		}
		return min(i, n)
	}
	a, z := norm(start, 0), norm(end, n)
	if a >= z {
		return ""
	}
	return string(rs[a:z])
}

func strMethod(self any, s string, name string) (any, bool) {
	wrap := func(r string) any {
		if _, m := self.(markup); m {
			return markup(r)
		}
		return r
	}
	m := func(fn func(st *state, line int, args []any, kw *dict) any) (any, bool) {
		return method(self, name, fn), true
	}
	switch name {
	case "strip", "lstrip", "rstrip":
		return m(func(st *state, line int, args []any, kw *dict) any {
			b := st.bind(line, name, args, kw, []string{"chars"}, 0)
			return wrap(pyStrip(s, b.get(0, nil), name != "rstrip", name != "lstrip"))
		})
	case "split", "rsplit":
		return m(func(st *state, line int, args []any, kw *dict) any {
			b := st.bind(line, name, args, kw, []string{"sep", "maxsplit"}, 0)
			sep := b.get(0, nil)
			if sp, ok := strOf(sep); ok && sp == "" {
				st.fail(line, "ValueError: empty separator")
			}
			maxsplit, _ := toInt(b.get(1, int64(-1)))
			if name == "rsplit" {
				return newList(pyRSplit(s, sep, maxsplit))
			}
			return newList(pySplit(s, sep, maxsplit))
		})
	case "splitlines":
		return m(func(st *state, line int, args []any, kw *dict) any {
			b := st.bind(line, name, args, kw, []string{"keepends"}, 0)
			keep := truthy(b.get(0, false))
			var out []any
			start := 0
			for i := 0; i < len(s); {
				r, n := utf8.DecodeRuneInString(s[i:])
				if !isLineBreak(r) {
					i += n
					continue
				}
				end := i + n
				if r == '\r' && end < len(s) && s[end] == '\n' {
					end++
				}
				if keep {
					out = append(out, s[start:end])
				} else {
					out = append(out, s[start:i])
				}
				start, i = end, end
			}
			if start < len(s) {
				out = append(out, s[start:])
			}
			return newList(out)
		})
	case "startswith", "endswith":
		return m(func(st *state, line int, args []any, kw *dict) any {
			b := st.bind(line, name, args, kw, []string{"prefix", "start", "end"}, 1)
			sub := substr(s, b.get(1, nil), b.get(2, nil))
			var cands []any
			if t, ok := b.vals[0].(*list); ok && t.kind == kTuple {
				cands = t.items
			} else {
				cands = []any{b.vals[0]}
			}
			for _, c := range cands {
				p, ok := strOf(c)
				if !ok {
					st.fail(line, "TypeError: %s first arg must be str or a tuple of str, not %s", name, typeName(c))
				}
				if name == "startswith" && strings.HasPrefix(sub, p) || name == "endswith" && strings.HasSuffix(sub, p) {
					return true
				}
			}
			return false
		})
	case "replace":
		return m(func(st *state, line int, args []any, kw *dict) any {
			b := st.bind(line, name, args, kw, []string{"old", "new", "count"}, 2)
			old, ok1 := strOf(b.vals[0])
			nw, ok2 := strOf(b.vals[1])
			if !ok1 || !ok2 {
				st.fail(line, "TypeError: replace() arguments must be str")
			}
			n, _ := toInt(b.get(2, int64(-1)))
			if n < 0 {
				n = -1
			}
			if len(nw) > len(old) {
				st.checkSize(line, len(s)+(len(nw)-len(old))*(strings.Count(s, old)+1))
			}
			return wrap(strings.Replace(s, old, nw, int(n)))
		})
	case "upper", "lower", "title", "capitalize", "swapcase", "casefold":
		return m(func(st *state, line int, args []any, kw *dict) any {
			st.bind(line, name, args, kw, nil, 0)
			switch name {
			case "upper":
				return wrap(strings.ToUpper(s))
			case "lower", "casefold":
				return wrap(strings.ToLower(s))
			case "title":
				return wrap(pyTitle(s))
			case "capitalize":
				return wrap(pyCapitalize(s))
			}
			return wrap(strings.Map(func(r rune) rune {
				if unicode.IsUpper(r) {
					return unicode.ToLower(r)
				}
				return unicode.ToUpper(r)
			}, s))
		})
	case "find", "rfind", "index", "rindex", "count":
		return m(func(st *state, line int, args []any, kw *dict) any {
			b := st.bind(line, name, args, kw, []string{"sub", "start", "end"}, 1)
			sub, ok := strOf(b.vals[0])
			if !ok {
				st.fail(line, "TypeError: must be str, not %s", typeName(b.vals[0]))
			}
			start, _ := toInt(b.get(1, int64(0)))
			if start < 0 {
				start = max(0, start+int64(utf8.RuneCountInString(s)))
			}
			hay := substr(s, b.get(1, nil), b.get(2, nil))
			if name == "count" {
				if sub == "" {
					return int64(utf8.RuneCountInString(hay) + 1)
				}
				return int64(strings.Count(hay, sub))
			}
			var i int
			if name == "find" || name == "index" {
				i = strings.Index(hay, sub)
			} else {
				i = strings.LastIndex(hay, sub)
			}
			if i < 0 {
				if name == "index" || name == "rindex" {
					st.fail(line, "ValueError: substring not found")
				}
				return int64(-1)
			}
			return start + runeIndex(hay, i)
		})
	case "join":
		return m(func(st *state, line int, args []any, kw *dict) any {
			b := st.bind(line, name, args, kw, []string{"iterable"}, 1)
			items, ok := iterate(b.vals[0])
			if !ok {
				st.fail(line, "TypeError: can only join an iterable")
			}
			parts := make([]string, len(items))
			total := 0
			for i, it := range items {
				p, ok := strOf(it)
				if !ok {
					st.fail(line, "TypeError: sequence item %d: expected str instance, %s found", i, typeName(it))
				}
				parts[i] = p
				total += len(p) + len(s)
			}
			st.checkSize(line, total)
			return wrap(strings.Join(parts, s))
		})
	case "format":
		return m(func(st *state, line int, args []any, kw *dict) any {
			return wrap(st.strFormat(s, args, kw, line))
		})
	case "isdigit", "isdecimal", "isnumeric", "isalpha", "isalnum", "isspace", "isupper", "islower", "istitle":
		return m(func(st *state, line int, args []any, kw *dict) any {
			st.bind(line, name, args, kw, nil, 0)
			return strPredicate(s, name)
		})
	case "zfill", "center", "ljust", "rjust":
		return m(func(st *state, line int, args []any, kw *dict) any {
			b := st.bind(line, name, args, kw, []string{"width", "fillchar"}, 1)
			w, ok := toInt(b.vals[0])
			if !ok {
				st.fail(line, "TypeError: an integer is required")
			}
			st.checkSize(line, int(min(w, 1<<31)))
			fill := " "
			if f, ok := strOf(b.get(1, " ")); ok && utf8.RuneCountInString(f) == 1 {
				fill = f
			}
			n := int64(utf8.RuneCountInString(s))
			if w <= n {
				return wrap(s)
			}
			pad := int(w - n)
			switch name {
			case "zfill":
				sign := ""
				body := s
				if strings.HasPrefix(s, "-") || strings.HasPrefix(s, "+") {
					sign, body = s[:1], s[1:]
				}
				return wrap(sign + strings.Repeat("0", pad) + body)
			case "ljust":
				return wrap(s + strings.Repeat(fill, pad))
			case "rjust":
				return wrap(strings.Repeat(fill, pad) + s)
			}
			left := pad / 2
			if pad%2 == 1 && w%2 == 1 {
				left++
			}
			return wrap(strings.Repeat(fill, left) + s + strings.Repeat(fill, pad-left))
		})
	case "partition", "rpartition":
		return m(func(st *state, line int, args []any, kw *dict) any {
			b := st.bind(line, name, args, kw, []string{"sep"}, 1)
			sep, _ := strOf(b.vals[0])
			var i int
			if name == "partition" {
				i = strings.Index(s, sep)
			} else {
				i = strings.LastIndex(s, sep)
			}
			if i < 0 {
				if name == "partition" {
					return newTuple(s, "", "")
				}
				return newTuple("", "", s)
			}
			return newTuple(s[:i], sep, s[i+len(sep):])
		})
	case "removeprefix", "removesuffix":
		return m(func(st *state, line int, args []any, kw *dict) any {
			b := st.bind(line, name, args, kw, []string{"affix"}, 1)
			a, _ := strOf(b.vals[0])
			if name == "removeprefix" {
				return wrap(strings.TrimPrefix(s, a))
			}
			return wrap(strings.TrimSuffix(s, a))
		})
	}
	return nil, false
}

func strPredicate(s, name string) bool {
	if s == "" {
		return false
	}
	cased := false
	prevCased := false
	for _, r := range s {
		switch name {
		case "isdigit", "isdecimal", "isnumeric":
			if !unicode.IsDigit(r) && !(name == "isnumeric" && unicode.IsNumber(r)) {
				return false
			}
		case "isalpha":
			if !unicode.IsLetter(r) {
				return false
			}
		case "isalnum":
			if !unicode.IsLetter(r) && !unicode.IsNumber(r) {
				return false
			}
		case "isspace":
			if !isSpace(r) {
				return false
			}
		case "isupper":
			if unicode.IsLower(r) {
				return false
			}
			cased = cased || unicode.IsUpper(r)
		case "islower":
			if unicode.IsUpper(r) {
				return false
			}
			cased = cased || unicode.IsLower(r)
		case "istitle":
			if unicode.IsUpper(r) || unicode.IsTitle(r) {
				if prevCased {
					return false
				}
				cased = true
			} else if unicode.IsLower(r) && !prevCased {
				return false
			}
			prevCased = isCased(r)
		}
	}
	switch name {
	case "isupper", "islower", "istitle":
		return cased
	}
	return true
}
