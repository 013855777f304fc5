package jinja

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"
)

// Error is a template that does not parse or fails while rendering.
type Error struct {
	// Line is the template line (1-based) of the statement or expression
	// that failed; 0 when unknown.
	Line int
	// Msg is the failure, with Python's exception name when it has one
	// ("TypeError: ..."); for raise_exception, exactly the template's text.
	Msg string
	// Syntax marks a template that does not parse.
	Syntax bool
	// Raised marks a raise_exception call.
	Raised bool
	// Limit marks a render stopped by Limits (errors.Is(err, ErrLimit)).
	Limit bool
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
	}
	return e.Msg
}

// Is matches ErrLimit for a render stopped by its limits.
func (e *Error) Is(target error) bool { return target == ErrLimit && e.Limit }

// ErrLimit matches (errors.Is) a render stopped by Limits.
var ErrLimit = errors.New("jinja: template exceeded its limits")

// Limits bound one Render. Zero fields mean no bound.
type Limits struct {
	// Steps caps the work: loop iterations, macro calls, printed
	// expressions and filtered items, each one step, and range(n), n.
	Steps int64
	// Bytes caps the output and any one string the template builds, in
	// bytes.
	Bytes int
}

// DefaultLimits are generous for chat templates (a few thousand steps and
// tens of KiB) and small enough that a hostile template ends in well
// under a second.
var DefaultLimits = Limits{Steps: 1_000_000, Bytes: 1 << 20}

// Template is a parsed template. It is immutable: Render may be called
// concurrently.
type Template struct {
	body []stmt
}

// Parse parses a Jinja2 template as Hugging Face's chat-template
// environment compiles it (trim_blocks, lstrip_blocks, the loopcontrols
// extension, the {% generation %} tag). Errors are an *Error with Syntax
// set and the line; so is a filter or test name the environment lacks,
// outside an if (where Jinja2 defers it to when it runs).
func Parse(source string) (*Template, error) {
	toks, err := lex(source)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks, filters: map[string]bool{}, tests: map[string]bool{}}
	for name := range builtinFilters {
		p.filters[name] = true
	}
	for name := range builtinTests {
		p.tests[name] = true
	}
	body, err := p.parseTemplate()
	if err != nil {
		return nil, err
	}
	return &Template{body: body}, nil
}

// Options are one render's environment besides its variables.
type Options struct {
	// Now is the time strftime_now formats, in its own location; the zero
	// Time means time.Now().
	Now time.Time
	// Limits bounds the render; the zero value means no bound (use
	// DefaultLimits for a template you did not write).
	Limits Limits
}

// Render renders the template with vars, the template's global variables.
// Values may be nil, bool, int, int64, float64, string, []any,
// map[string]any (its keys sorted: Go maps have no order) or
// json.RawMessage (decoded as Python's json.loads does, object keys in
// their order, integers as ints): transformers passes messages and tools
// so. The globals raise_exception, strftime_now, range, dict, namespace
// and the tojson filter are transformers' and Jinja2's.
//
// A template that fails returns an *Error with the line; a render past
// opts.Limits an *Error matching ErrLimit.
func (t *Template) Render(vars map[string]any, opts Options) (out string, err error) {
	st := &state{limits: opts.Limits, now: opts.Now, filters: builtinFilters, tests: builtinTests}
	if st.now.IsZero() {
		st.now = time.Now()
	}
	st.globals = &scope{global: globals()}
	top := child(st.globals)
	for name, v := range vars {
		cv, err := convert(v)
		if err != nil {
			return "", fmt.Errorf("jinja: variable %s: %w", name, err)
		}
		top.set(name, cv)
	}
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(failure)
			if !ok {
				panic(r)
			}
			out, err = "", f.err
		}
	}()
	w := &writer{st: st}
	st.execBody(t.body, top, w)
	return w.b.String(), nil
}

// convert turns a Go value into the engine's.
func convert(v any) (any, error) {
	switch x := v.(type) {
	case nil, bool, int64, float64, string:
		return x, nil
	case int:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case float32:
		return float64(x), nil
	case json.RawMessage:
		if x == nil {
			return nil, nil
		}
		return fromJSON(x)
	case []any:
		l := newList(make([]any, len(x)))
		for i, it := range x {
			c, err := convert(it)
			if err != nil {
				return nil, err
			}
			l.items[i] = c
		}
		return l, nil
	case []string:
		l := newList(make([]any, len(x)))
		for i, it := range x {
			l.items[i] = it
		}
		return l, nil
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		d := newDict()
		for _, k := range keys {
			c, err := convert(x[k])
			if err != nil {
				return nil, err
			}
			d.set(k, c)
		}
		return d, nil
	}
	return nil, fmt.Errorf("unsupported type %T", v)
}

// maxRange is the immutable sandbox's MAX_RANGE.
const maxRange = 100_000

func globals() map[string]any {
	fn := func(name string, f func(st *state, line int, args []any, kw *dict) any) *macro {
		return &macro{name: name, fn: f}
	}
	return map[string]any{
		"raise_exception": fn("raise_exception", func(st *state, line int, args []any, kw *dict) any {
			b := st.bind(line, "raise_exception", args, kw, []string{"message"}, 0)
			panic(failure{&Error{Line: line, Msg: pyStr(b.get(0, "")), Raised: true}})
		}),
		"strftime_now": fn("strftime_now", func(st *state, line int, args []any, kw *dict) any {
			b := st.bind(line, "strftime_now", args, kw, []string{"format"}, 1)
			f, ok := strOf(b.vals[0])
			if !ok {
				st.fail(line, "TypeError: strftime() argument 1 must be str, not %s", typeName(b.vals[0]))
			}
			return strftime(st.now, f)
		}),
		"range": fn("range", func(st *state, line int, args []any, kw *dict) any {
			if kw != nil && len(kw.keys) > 0 {
				st.fail(line, "TypeError: range() takes no keyword arguments")
			}
			var lo, hi, step int64 = 0, 0, 1
			ints := make([]int64, len(args))
			for i, a := range args {
				n, ok := toInt(a)
				if !ok {
					if u, isU := a.(*undefined); isU {
						st.failUndefined(line, u)
					}
					st.fail(line, "TypeError: '%s' object cannot be interpreted as an integer", typeName(a))
				}
				ints[i] = n
			}
			switch len(ints) {
			case 1:
				hi = ints[0]
			case 2:
				lo, hi = ints[0], ints[1]
			case 3:
				lo, hi, step = ints[0], ints[1], ints[2]
			default:
				st.fail(line, "TypeError: range expected 1 to 3 arguments, got %d", len(ints))
			}
			if step == 0 {
				st.fail(line, "ValueError: range() arg 3 must not be zero")
			}
			n := int64(0)
			if step > 0 && hi > lo {
				n = (hi - lo + step - 1) / step
			} else if step < 0 && lo > hi {
				n = (lo - hi - step - 1) / -step
			}
			if n > maxRange {
				st.fail(line, "OverflowError: Range too big. The sandbox blocks ranges larger than MAX_RANGE (%d).", maxRange)
			}
			st.steps += n // the list is n items of work
			st.step(line)
			items := make([]any, n)
			for i := range items {
				items[i] = lo + int64(i)*step
			}
			return newList(items)
		}),
		"dict": fn("dict", func(st *state, line int, args []any, kw *dict) any {
			d := newDict()
			if len(args) > 1 {
				st.fail(line, "TypeError: dict expected at most 1 argument, got %d", len(args))
			}
			if len(args) == 1 {
				switch a := args[0].(type) {
				case *dict:
					d = a.copy()
				default:
					for _, it := range st.mustIterate(line, a) {
						pair, ok := iterate(it)
						if !ok || len(pair) != 2 {
							st.fail(line, "ValueError: dictionary update sequence element has the wrong length")
						}
						if !d.set(pair[0], pair[1]) {
							st.fail(line, "TypeError: unhashable type: '%s'", typeName(pair[0]))
						}
					}
				}
			}
			if kw != nil {
				for i, k := range kw.keys {
					d.set(k, kw.vals[i])
				}
			}
			return d
		}),
		"namespace": fn("namespace", func(st *state, line int, args []any, kw *dict) any {
			ns := &namespace{attrs: newDict()}
			for _, a := range args {
				d, ok := a.(*dict)
				if !ok {
					st.fail(line, "TypeError: namespace() takes a mapping")
				}
				for i, k := range d.keys {
					ns.attrs.set(k, d.vals[i])
				}
			}
			if kw != nil {
				for i, k := range kw.keys {
					ns.attrs.set(k, kw.vals[i])
				}
			}
			return ns
		}),
		"joiner": fn("joiner", func(st *state, line int, args []any, kw *dict) any {
			b := st.bind(line, "joiner", args, kw, []string{"sep"}, 0)
			sep := pyStr(b.get(0, ", "))
			used := false
			return fn("joiner", func(st *state, line int, args []any, kw *dict) any {
				if !used {
					used = true
					return ""
				}
				return sep
			})
		}),
		"cycler": fn("cycler", func(st *state, line int, args []any, kw *dict) any {
			d := newDict()
			i := 0
			d.set("next", fn("next", func(st *state, line int, _ []any, _ *dict) any {
				if len(args) == 0 {
					return nil
				}
				v := args[i%len(args)]
				i++
				return v
			}))
			d.set("reset", fn("reset", func(st *state, line int, _ []any, _ *dict) any { i = 0; return nil }))
			return d
		}),
	}
}
