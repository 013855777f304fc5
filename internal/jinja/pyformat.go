package jinja

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// formatSpec applies a Python format spec ([[fill]align][sign][#][0]
// [width][,][.precision][type]) to v, as format(v, spec) does.
func (st *state) formatSpec(v any, spec string, line int) string {
	if spec == "" {
		return pyStr(v)
	}
	fill, align := " ", byte(0)
	rs := []rune(spec)
	if len(rs) >= 2 && strings.ContainsRune("<>^=", rs[1]) {
		fill, align = string(rs[0]), byte(rs[1])
		spec = string(rs[2:])
	} else if len(spec) >= 1 && strings.IndexByte("<>^=", spec[0]) >= 0 {
		align = spec[0]
		spec = spec[1:]
	}
	sign := byte('-')
	if spec != "" && strings.IndexByte("+- ", spec[0]) >= 0 {
		sign = spec[0]
		spec = spec[1:]
	}
	alt := strings.HasPrefix(spec, "#")
	spec = strings.TrimPrefix(spec, "#")
	if strings.HasPrefix(spec, "0") {
		if align == 0 {
			fill, align = "0", '='
		}
		spec = spec[1:]
	}
	i := 0
	for i < len(spec) && spec[i] >= '0' && spec[i] <= '9' {
		i++
	}
	width, _ := strconv.Atoi(spec[:i])
	spec = spec[i:]
	comma := strings.HasPrefix(spec, ",")
	spec = strings.TrimPrefix(spec, ",")
	prec := -1
	if strings.HasPrefix(spec, ".") {
		j := 1
		for j < len(spec) && spec[j] >= '0' && spec[j] <= '9' {
			j++
		}
		prec, _ = strconv.Atoi(spec[1:j])
		spec = spec[j:]
	}
	typ := byte(0)
	if len(spec) == 1 {
		typ = spec[0]
	} else if spec != "" {
		st.fail(line, "ValueError: Invalid format specifier")
	}
	st.checkSize(line, width)
	var body, prefix string
	numeric := false
	switch x := v.(type) {
	case string, markup:
		s, _ := strOf(x)
		if typ != 0 && typ != 's' {
			st.fail(line, "ValueError: Unknown format code '%c' for object of type 'str'", typ)
		}
		if prec >= 0 && utf8.RuneCountInString(s) > prec {
			s = string([]rune(s)[:prec])
		}
		body = s
		if align == 0 {
			align = '<'
		}
	case bool, int64, float64:
		numeric = true
		f, _ := toFloat(x)
		n, isInt := toInt(x)
		if typ == 0 && !isInt {
			typ = 'r'
		}
		neg := f < 0 || (isInt && n < 0)
		switch typ {
		case 0, 'd', 'n':
			if !isInt {
				st.fail(line, "ValueError: Unknown format code 'd' for object of type 'float'")
			}
			body = strconv.FormatInt(abs64(n), 10)
			if comma {
				body = groupThousands(body)
			}
		case 'x', 'X', 'o', 'b':
			if !isInt {
				st.fail(line, "ValueError: Unknown format code '%c' for object of type 'float'", typ)
			}
			base := map[byte]int{'x': 16, 'X': 16, 'o': 8, 'b': 2}[typ]
			body = strconv.FormatInt(abs64(n), base)
			if typ == 'X' {
				body = strings.ToUpper(body)
			}
			if alt {
				prefix = "0" + string(typ)
			}
		case 'f', 'F', 'e', 'E', 'g', 'G', '%', 'r':
			af := math.Abs(f)
			switch typ {
			case 'r':
				body = formatFloat(af)
				if prec >= 0 {
					body = strconv.FormatFloat(af, 'g', prec, 64)
				}
			case '%':
				if prec < 0 {
					prec = 6
				}
				body = strconv.FormatFloat(af*100, 'f', prec, 64) + "%"
			default:
				if prec < 0 {
					prec = 6
				}
				body = strconv.FormatFloat(af, typ, prec, 64)
			}
			if comma {
				ip, fp, _ := strings.Cut(body, ".")
				body = groupThousands(ip)
				if fp != "" {
					body += "." + fp
				}
			}
		default:
			st.fail(line, "ValueError: Unknown format code '%c' for object of type '%s'", typ, typeName(x))
		}
		switch {
		case neg:
			prefix = "-" + prefix
		case sign == '+':
			prefix = "+" + prefix
		case sign == ' ':
			prefix = " " + prefix
		}
		if align == 0 {
			align = '>'
		}
	default:
		body = pyStr(v)
		if align == 0 {
			align = '<'
		}
	}
	pad := width - utf8.RuneCountInString(prefix+body)
	if pad <= 0 {
		return prefix + body
	}
	switch align {
	case '<':
		return prefix + body + strings.Repeat(fill, pad)
	case '^':
		return strings.Repeat(fill, pad/2) + prefix + body + strings.Repeat(fill, pad-pad/2)
	case '=':
		if numeric {
			return prefix + strings.Repeat(fill, pad) + body
		}
	}
	return strings.Repeat(fill, pad) + prefix + body
}

func abs64(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

func groupThousands(digits string) string {
	var b strings.Builder
	for i, c := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// strFormat is str.format(*args, **kw) (the sandbox's formatter: fields
// "{}", "{0}", "{name}" with .attr and [key] lookups, !r/!s and a spec).
func (st *state) strFormat(s string, args []any, kw *dict, line int) string {
	var b strings.Builder
	auto := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c == '}' {
			if i+1 < len(s) && s[i+1] == '}' {
				b.WriteByte('}')
				i += 2
				continue
			}
			st.fail(line, "ValueError: Single '}' encountered in format string")
		}
		if c != '{' {
			b.WriteByte(c)
			i++
			continue
		}
		if i+1 < len(s) && s[i+1] == '{' {
			b.WriteByte('{')
			i += 2
			continue
		}
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			st.fail(line, "ValueError: Single '{' encountered in format string")
		}
		field := s[i+1 : i+end]
		i += end + 1
		field, spec, _ := strings.Cut(field, ":")
		field, conv, _ := strings.Cut(field, "!")
		name := field
		rest := ""
		if k := strings.IndexAny(field, ".["); k >= 0 {
			name, rest = field[:k], field[k:]
		}
		var v any
		switch {
		case name == "":
			if auto >= len(args) {
				st.fail(line, "IndexError: Replacement index %d out of range for positional args tuple", auto)
			}
			v = args[auto]
			auto++
		case name[0] >= '0' && name[0] <= '9':
			n, _ := strconv.Atoi(name)
			if n >= len(args) {
				st.fail(line, "IndexError: Replacement index %d out of range for positional args tuple", n)
			}
			v = args[n]
		default:
			var ok bool
			if kw != nil {
				v, ok = kw.get(name)
			}
			if !ok {
				st.fail(line, "KeyError: '%s'", name)
			}
		}
		for rest != "" {
			if rest[0] == '.' {
				k := strings.IndexAny(rest[1:], ".[")
				attr := rest[1:]
				if k >= 0 {
					attr, rest = rest[1:1+k], rest[1+k:]
				} else {
					rest = ""
				}
				v = st.getattr(v, attr, line)
				continue
			}
			k := strings.IndexByte(rest, ']')
			if k < 0 {
				st.fail(line, "ValueError: Missing ']' in format string")
			}
			key := rest[1:k]
			rest = rest[k+1:]
			if n, err := strconv.Atoi(key); err == nil {
				v = st.getitem(v, int64(n), line)
			} else {
				v = st.getitem(v, key, line)
			}
		}
		switch conv {
		case "r":
			v = pyRepr(v)
		case "s":
			v = pyStr(v)
		}
		out := st.formatSpec(v, spec, line)
		st.checkSize(line, b.Len()+len(out))
		b.WriteString(out)
	}
	return b.String()
}

// percentFormat is Python's s % args for %s %r %d %i %f %e %g %x %o %c %%.
func (st *state) percentFormat(s string, args any, line int) string {
	var vals []any
	var mapping *dict
	switch a := args.(type) {
	case *list:
		if a.kind == kTuple {
			vals = a.items
		} else {
			vals = []any{a}
		}
	case *dict:
		mapping = a
		vals = []any{a}
	default:
		vals = []any{a}
	}
	next := 0
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		i++
		if i >= len(s) {
			st.fail(line, "ValueError: incomplete format")
		}
		var v any
		haveV := false
		if s[i] == '(' {
			end := strings.IndexByte(s[i:], ')')
			if end < 0 || mapping == nil {
				st.fail(line, "TypeError: format requires a mapping")
			}
			key := s[i+1 : i+end]
			var ok bool
			if v, ok = mapping.get(key); !ok {
				st.fail(line, "KeyError: '%s'", key)
			}
			haveV = true
			i += end + 1
		}
		j := i
		for j < len(s) && strings.IndexByte("-+ #0123456789.", s[j]) >= 0 {
			j++
		}
		if j >= len(s) {
			st.fail(line, "ValueError: incomplete format")
		}
		flags, typ := s[i:j], s[j]
		i = j
		if typ == '%' {
			b.WriteByte('%')
			continue
		}
		if !haveV {
			if next >= len(vals) {
				st.fail(line, "TypeError: not enough arguments for format string")
			}
			v = vals[next]
			next++
		}
		var out string
		switch typ {
		case 's':
			out = fmt.Sprintf("%"+flags+"s", pyStr(v))
		case 'r', 'a':
			out = fmt.Sprintf("%"+flags+"s", pyRepr(v))
		case 'd', 'i', 'u':
			f, ok := toFloat(v)
			if !ok {
				st.fail(line, "TypeError: %%%c format: a real number is required, not %s", typ, typeName(v))
			}
			out = fmt.Sprintf("%"+flags+"d", int64(f))
		case 'f', 'F', 'e', 'E', 'g', 'G':
			f, ok := toFloat(v)
			if !ok {
				st.fail(line, "TypeError: must be real number, not %s", typeName(v))
			}
			out = fmt.Sprintf("%"+flags+string(typ), f)
		case 'x', 'X', 'o':
			n, ok := toInt(v)
			if !ok {
				st.fail(line, "TypeError: %%%c format: an integer is required, not %s", typ, typeName(v))
			}
			out = fmt.Sprintf("%"+flags+string(typ), n)
		case 'c':
			if n, ok := toInt(v); ok {
				out = string(rune(n))
			} else {
				out = pyStr(v)
			}
		default:
			st.fail(line, "ValueError: unsupported format character '%c'", typ)
		}
		st.checkSize(line, b.Len()+len(out))
		b.WriteString(out)
	}
	if next < len(vals) && mapping == nil {
		st.fail(line, "TypeError: not all arguments converted during string formatting")
	}
	return b.String()
}

var (
	weekdays = []string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}
	months   = []string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}
)

// strftime is C's strftime (glibc, as Python's datetime.strftime calls
// it) for the common directives, with glibc's "-" (no padding) flag.
func strftime(t time.Time, format string) string {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' || i+1 >= len(format) {
			b.WriteByte(c)
			continue
		}
		i++
		pad := true
		if format[i] == '-' && i+1 < len(format) {
			pad = false
			i++
		}
		num := func(n, width int) {
			if pad {
				fmt.Fprintf(&b, "%0*d", width, n)
			} else {
				fmt.Fprintf(&b, "%d", n)
			}
		}
		switch format[i] {
		case 'Y':
			fmt.Fprintf(&b, "%d", t.Year())
		case 'y':
			num(t.Year()%100, 2)
		case 'm':
			num(int(t.Month()), 2)
		case 'd':
			num(t.Day(), 2)
		case 'e':
			if pad {
				fmt.Fprintf(&b, "%2d", t.Day())
			} else {
				fmt.Fprintf(&b, "%d", t.Day())
			}
		case 'H':
			num(t.Hour(), 2)
		case 'I':
			h := t.Hour() % 12
			if h == 0 {
				h = 12
			}
			num(h, 2)
		case 'M':
			num(t.Minute(), 2)
		case 'S':
			num(t.Second(), 2)
		case 'f':
			fmt.Fprintf(&b, "%06d", t.Nanosecond()/1000)
		case 'j':
			num(t.YearDay(), 3)
		case 'p':
			if t.Hour() < 12 {
				b.WriteString("AM")
			} else {
				b.WriteString("PM")
			}
		case 'a':
			b.WriteString(weekdays[t.Weekday()][:3])
		case 'A':
			b.WriteString(weekdays[t.Weekday()])
		case 'b', 'h':
			b.WriteString(months[t.Month()-1][:3])
		case 'B':
			b.WriteString(months[t.Month()-1])
		case 'w':
			fmt.Fprintf(&b, "%d", int(t.Weekday()))
		case 'u':
			wd := int(t.Weekday())
			if wd == 0 {
				wd = 7
			}
			fmt.Fprintf(&b, "%d", wd)
		case 'Z':
			name, _ := t.Zone()
			b.WriteString(name)
		case 'z':
			_, off := t.Zone()
			sign := '+'
			if off < 0 {
				sign, off = '-', -off
			}
			fmt.Fprintf(&b, "%c%02d%02d", sign, off/3600, off/60%60)
		case 'F':
			fmt.Fprintf(&b, "%d-%02d-%02d", t.Year(), t.Month(), t.Day())
		case 'T':
			fmt.Fprintf(&b, "%02d:%02d:%02d", t.Hour(), t.Minute(), t.Second())
		case 'D':
			fmt.Fprintf(&b, "%02d/%02d/%02d", t.Month(), t.Day(), t.Year()%100)
		case 'c':
			fmt.Fprintf(&b, "%s %s %2d %02d:%02d:%02d %d", weekdays[t.Weekday()][:3], months[t.Month()-1][:3], t.Day(), t.Hour(), t.Minute(), t.Second(), t.Year())
		case 'x':
			fmt.Fprintf(&b, "%02d/%02d/%02d", t.Month(), t.Day(), t.Year()%100)
		case 'X':
			fmt.Fprintf(&b, "%02d:%02d:%02d", t.Hour(), t.Minute(), t.Second())
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case '%':
			b.WriteByte('%')
		default:
			b.WriteByte('%')
			b.WriteByte(format[i])
		}
	}
	return b.String()
}
