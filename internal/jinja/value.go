package jinja

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Values inside the engine are Python's, as Jinja2 sees them:
//
//	nil          None
//	bool         bool
//	int64        int
//	float64      float
//	string       str
//	markup       markupsafe.Markup (|safe): + and ~ with it escape the other side
//	*list        list, tuple, a generator (filters such as map), or a dict view
//	*dict        dict, insertion-ordered
//	*namespace   namespace()
//	*macro       a macro, a loop's cycle(), a bound method or a global function
//	*undefined   Undefined: a missing variable, attribute or item
//	*loopInfo    the loop variable
type (
	markup string
	list   struct {
		items []any
		kind  listKind
	}
	dict struct {
		keys  []any
		vals  []any
		index map[any]int
	}
	namespace struct{ attrs *dict }
	undefined struct {
		name   any  // the variable, attribute or key
		obj    any  // the object it was looked up on (hasObj)
		hasObj bool //
		hint   string
	}
)

type listKind uint8

const (
	kList listKind = iota
	kTuple
	kGen    // a generator: iterable once, no len(), not JSON
	kItems  // dict.items()
	kKeys   // dict.keys()
	kValues // dict.values()
)

func newList(items []any) *list   { return &list{items: items} }
func newTuple(items ...any) *list { return &list{items: items, kind: kTuple} }
func newGen(items []any) *list    { return &list{items: items, kind: kGen} }

func newDict() *dict { return &dict{index: map[any]int{}} }

// hashKey is the key a dict indexes v by (Python's hash equality: 1, 1.0
// and True are one key); ok is false for unhashable values.
func hashKey(v any) (any, bool) {
	switch x := v.(type) {
	case nil:
		return struct{}{}, true
	case bool:
		if x {
			return int64(1), true
		}
		return int64(0), true
	case int64:
		return x, true
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<62 {
			return int64(x), true
		}
		return x, true
	case string:
		return x, true
	case markup:
		return string(x), true
	case *list:
		if x.kind != kTuple {
			return nil, false
		}
		parts := make([]string, len(x.items))
		for i, it := range x.items {
			k, ok := hashKey(it)
			if !ok {
				return nil, false
			}
			parts[i] = fmt.Sprintf("%T:%v", k, k)
		}
		return "\x00tuple:" + strings.Join(parts, "\x00"), true
	case *undefined:
		return "\x00undefined", true
	}
	return fmt.Sprintf("\x00%p", v), true
}

func (d *dict) set(k, v any) bool {
	h, ok := hashKey(k)
	if !ok {
		return false
	}
	if i, ok := d.index[h]; ok {
		d.vals[i] = v
		return true
	}
	d.index[h] = len(d.keys)
	d.keys = append(d.keys, k)
	d.vals = append(d.vals, v)
	return true
}

func (d *dict) get(k any) (any, bool) {
	h, ok := hashKey(k)
	if !ok {
		return nil, false
	}
	i, ok := d.index[h]
	if !ok {
		return nil, false
	}
	return d.vals[i], true
}

func (d *dict) copy() *dict {
	c := &dict{keys: append([]any(nil), d.keys...), vals: append([]any(nil), d.vals...), index: make(map[any]int, len(d.index))}
	for k, v := range d.index {
		c.index[k] = v
	}
	return c
}

func isUndefined(v any) bool { _, ok := v.(*undefined); return ok }

func isString(v any) bool {
	switch v.(type) {
	case string, markup:
		return true
	}
	return false
}

// strOf is a str or Markup's text.
func strOf(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case markup:
		return string(x), true
	}
	return "", false
}

func isNumber(v any) bool {
	switch v.(type) {
	case bool, int64, float64:
		return true
	}
	return false
}

// toFloat is a number's value as a float; ok is false for non-numbers.
func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	case int64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

// toInt is an int or bool's value.
func toInt(v any) (int64, bool) {
	switch x := v.(type) {
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	case int64:
		return x, true
	}
	return 0, false
}

// typeName is Python's type(v).__name__.
func typeName(v any) string {
	switch x := v.(type) {
	case nil:
		return "NoneType"
	case bool:
		return "bool"
	case int64:
		return "int"
	case float64:
		return "float"
	case string:
		return "str"
	case markup:
		return "Markup"
	case *list:
		return [...]string{"list", "tuple", "generator", "dict_items", "dict_keys", "dict_values"}[x.kind]
	case *dict:
		return "dict"
	case *namespace:
		return "Namespace"
	case *undefined:
		return "Undefined"
	case *macro:
		if x.def != nil {
			return "Macro"
		}
		return "builtin_function_or_method"
	case *loopInfo:
		return "LoopContext"
	}
	return fmt.Sprintf("%T", v)
}

// objectTypeRepr is Jinja2's object_type_repr: "None", or "dict object".
func objectTypeRepr(v any) string {
	if v == nil {
		return "None"
	}
	return typeName(v) + " object"
}

func (u *undefined) message() string {
	switch {
	case u.hint != "":
		return u.hint
	case !u.hasObj:
		return pyRepr(u.name) + " is undefined"
	}
	if s, ok := u.name.(string); ok {
		return pyRepr(objectTypeRepr(u.obj)) + " has no attribute " + pyRepr(s)
	}
	return objectTypeRepr(u.obj) + " has no element " + pyRepr(u.name)
}

// truthy is Python's bool(v).
func truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case int64:
		return x != 0
	case float64:
		return x != 0
	case string:
		return x != ""
	case markup:
		return x != ""
	case *list:
		return x.kind == kGen || len(x.items) > 0
	case *dict:
		return len(x.keys) > 0
	case *undefined:
		return false
	}
	return true
}

// pyStr is Python's str(v) (what {{ v }} prints).
func pyStr(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case markup:
		return string(x)
	case *undefined:
		return ""
	}
	return pyRepr(v)
}

// pyRepr is Python's repr(v).
func pyRepr(v any) string {
	var b strings.Builder
	writeRepr(&b, v, 0)
	return b.String()
}

func writeRepr(b *strings.Builder, v any, depth int) {
	if depth > 100 {
		b.WriteString("...")
		return
	}
	switch x := v.(type) {
	case nil:
		b.WriteString("None")
	case bool:
		if x {
			b.WriteString("True")
		} else {
			b.WriteString("False")
		}
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case float64:
		b.WriteString(formatFloat(x))
	case string:
		writeStrRepr(b, x)
	case markup:
		b.WriteString("Markup(")
		writeStrRepr(b, string(x))
		b.WriteString(")")
	case *list:
		open, close := "[", "]"
		switch x.kind {
		case kTuple:
			open, close = "(", ")"
		case kGen:
			b.WriteString("<generator object at 0x7f0000000000>")
			return
		case kItems:
			open, close = "dict_items([", "])"
		case kKeys:
			open, close = "dict_keys([", "])"
		case kValues:
			open, close = "dict_values([", "])"
		}
		b.WriteString(open)
		for i, it := range x.items {
			if i > 0 {
				b.WriteString(", ")
			}
			writeRepr(b, it, depth+1)
		}
		if x.kind == kTuple && len(x.items) == 1 {
			b.WriteString(",")
		}
		b.WriteString(close)
	case *dict:
		b.WriteString("{")
		for i, k := range x.keys {
			if i > 0 {
				b.WriteString(", ")
			}
			writeRepr(b, k, depth+1)
			b.WriteString(": ")
			writeRepr(b, x.vals[i], depth+1)
		}
		b.WriteString("}")
	case *namespace:
		b.WriteString("<Namespace ")
		writeRepr(b, x.attrs, depth+1)
		b.WriteString(">")
	case *undefined:
		b.WriteString("Undefined")
	case *macro:
		if x.def != nil {
			b.WriteString("<Macro '" + x.def.name + "'>")
		} else {
			b.WriteString("<built-in method " + x.name + ">")
		}
	case *loopInfo:
		b.WriteString(fmt.Sprintf("<LoopContext %d/%d>", x.index+1, len(x.items)))
	default:
		fmt.Fprint(b, v)
	}
}

// writeStrRepr writes Python's repr of a str: single quotes unless the
// text has a single quote and no double quote; non-printable characters
// escaped.
func writeStrRepr(b *strings.Builder, s string) {
	q := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		q = '"'
	}
	b.WriteByte(q)
	for _, r := range s {
		switch {
		case r == rune(q) || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == utf8.RuneError:
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f || (r >= 0x80 && !unicode.IsPrint(r)):
			switch {
			case r < 0x100:
				fmt.Fprintf(b, `\x%02x`, r)
			case r < 0x10000:
				fmt.Fprintf(b, `\u%04x`, r)
			default:
				fmt.Fprintf(b, `\U%08x`, r)
			}
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte(q)
}

// formatFloat is Python's repr(float): the shortest text that reads back
// as f, in positional notation for exponents in [-4, 16), with ".0" on
// whole numbers.
func formatFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // d.ddde±XX
	mant, expS, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(expS)
	neg := strings.HasPrefix(mant, "-")
	mant = strings.TrimPrefix(mant, "-")
	digits := strings.Replace(mant, ".", "", 1)
	sign := ""
	if neg {
		sign = "-"
	}
	if exp < -4 || exp >= 16 {
		m := digits[:1]
		if len(digits) > 1 {
			m += "." + digits[1:]
		}
		es := "+"
		if exp < 0 {
			es = "-"
			exp = -exp
		}
		return fmt.Sprintf("%s%se%s%02d", sign, m, es, exp)
	}
	if exp < 0 {
		return sign + "0." + strings.Repeat("0", -exp-1) + digits
	}
	if len(digits) <= exp+1 {
		return sign + digits + strings.Repeat("0", exp+1-len(digits)) + ".0"
	}
	return sign + digits[:exp+1] + "." + digits[exp+1:]
}

// equal is Python's ==.
func equal(a, b any) bool {
	if fa, ok := toFloat(a); ok {
		if fb, ok := toFloat(b); ok {
			ia, aInt := toInt(a)
			ib, bInt := toInt(b)
			if aInt && bInt {
				return ia == ib
			}
			return fa == fb
		}
		return false
	}
	switch x := a.(type) {
	case nil:
		return b == nil
	case string, markup:
		s, _ := strOf(x)
		t, ok := strOf(b)
		return ok && s == t
	case *list:
		y, ok := b.(*list)
		if !ok || (x.kind == kTuple) != (y.kind == kTuple) || x.kind == kGen || y.kind == kGen || len(x.items) != len(y.items) {
			return ok && x == y
		}
		for i := range x.items {
			if !equal(x.items[i], y.items[i]) {
				return false
			}
		}
		return true
	case *dict:
		y, ok := b.(*dict)
		if !ok || len(x.keys) != len(y.keys) {
			return false
		}
		for i, k := range x.keys {
			v, ok := y.get(k)
			if !ok || !equal(x.vals[i], v) {
				return false
			}
		}
		return true
	case *undefined:
		return isUndefined(b)
	}
	return a == b
}

// less is Python's a < b; ok is false when the types do not order.
func less(a, b any) (bool, bool) {
	if fa, ok := toFloat(a); ok {
		if fb, ok := toFloat(b); ok {
			ia, aInt := toInt(a)
			ib, bInt := toInt(b)
			if aInt && bInt {
				return ia < ib, true
			}
			return fa < fb, true
		}
		return false, false
	}
	if s, ok := strOf(a); ok {
		if t, ok := strOf(b); ok {
			return s < t, true // UTF-8 byte order is code point order
		}
		return false, false
	}
	x, ok1 := a.(*list)
	y, ok2 := b.(*list)
	if ok1 && ok2 && (x.kind == kTuple) == (y.kind == kTuple) {
		for i := 0; i < len(x.items) && i < len(y.items); i++ {
			if equal(x.items[i], y.items[i]) {
				continue
			}
			return less(x.items[i], y.items[i])
		}
		return len(x.items) < len(y.items), true
	}
	return false, false
}

// sortValues sorts vs by key(v) with Python's ordering, stably; ok is
// false when two keys do not order.
func sortValues(vs []any, key func(any) any, reverse bool) bool {
	ok := true
	sort.SliceStable(vs, func(i, j int) bool {
		a, b := key(vs[i]), key(vs[j])
		if reverse {
			a, b = b, a
		}
		l, good := less(a, b)
		if !good {
			ok = false
		}
		return l
	})
	return ok
}

// iterate lists what `for x in v` visits; ok is false when v is not
// iterable. Iterating a generator consumes it.
func iterate(v any) ([]any, bool) {
	switch x := v.(type) {
	case *list:
		items := x.items
		if x.kind == kGen {
			x.items = nil
		}
		return items, true
	case *dict:
		return x.keys, true
	case string:
		return runes(x), true
	case markup:
		return runes(string(x)), true
	case *undefined:
		return nil, true
	case *namespace:
		return nil, false
	}
	return nil, false
}

func runes(s string) []any {
	out := make([]any, 0, len(s))
	for _, r := range s {
		out = append(out, string(r))
	}
	return out
}

// length is Python's len(v); ok is false when v has none.
func length(v any) (int, bool) {
	switch x := v.(type) {
	case string:
		return utf8.RuneCountInString(x), true
	case markup:
		return utf8.RuneCountInString(string(x)), true
	case *list:
		if x.kind == kGen {
			return 0, false
		}
		return len(x.items), true
	case *dict:
		return len(x.keys), true
	case *undefined:
		return 0, true
	}
	return 0, false
}

// escapeHTML is markupsafe.escape's text: & < > " ' as entities.
func escapeHTML(s string) string {
	return htmlEscaper.Replace(s)
}

var htmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;")

// toMarkup is markupsafe.escape(v): Markup as is, anything else escaped.
func toMarkup(v any) markup {
	if m, ok := v.(markup); ok {
		return m
	}
	return markup(escapeHTML(pyStr(v)))
}
