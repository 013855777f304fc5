package jinja

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// fromJSON decodes data as Python's json.loads does: objects keep their
// key order, integers stay ints and numbers with a fraction or exponent
// are floats.
func fromJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeJSON(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("jinja: trailing data after the JSON value")
	}
	return v, nil
}

func decodeJSON(dec *json.Decoder, depth int) (any, error) {
	if depth > 1000 {
		return nil, errors.New("jinja: JSON nested too deeply")
	}
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch x := t.(type) {
	case json.Delim:
		switch x {
		case '[':
			l := newList(nil)
			for dec.More() {
				v, err := decodeJSON(dec, depth+1)
				if err != nil {
					return nil, err
				}
				l.items = append(l.items, v)
			}
			_, err := dec.Token()
			return l, err
		case '{':
			d := newDict()
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v, err := decodeJSON(dec, depth+1)
				if err != nil {
					return nil, err
				}
				d.set(k.(string), v)
			}
			_, err := dec.Token()
			return d, err
		}
		return nil, fmt.Errorf("jinja: unexpected %v in JSON", x)
	case json.Number:
		s := x.String()
		if !strings.ContainsAny(s, ".eE") {
			if n, err := strconv.ParseInt(s, 10, 64); err == nil {
				return n, nil
			}
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return nil, err
		}
		return f, nil
	case string, bool, nil:
		return x, nil
	}
	return nil, fmt.Errorf("jinja: unexpected JSON token %v", t)
}

// jsonOptions are json.dumps' arguments that transformers' tojson passes.
type jsonOptions struct {
	ensureASCII bool
	indent      *string // nil: one line
	itemSep     string
	keySep      string
	sortKeys    bool
}

// toJSON is Python's json.dumps(v, ...) with opts.
func toJSON(v any, opts jsonOptions) (string, error) {
	var b strings.Builder
	if err := writeJSON(&b, v, opts, 0); err != nil {
		return "", err
	}
	return b.String(), nil
}

func writeJSON(b *strings.Builder, v any, o jsonOptions, level int) error {
	if level > 500 {
		return errors.New("RecursionError: maximum recursion depth exceeded while encoding a JSON object")
	}
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		if x {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case float64:
		switch {
		case math.IsNaN(x):
			b.WriteString("NaN")
		case math.IsInf(x, 1):
			b.WriteString("Infinity")
		case math.IsInf(x, -1):
			b.WriteString("-Infinity")
		default:
			b.WriteString(formatFloat(x))
		}
	case string:
		writeJSONString(b, x, o.ensureASCII)
	case markup:
		writeJSONString(b, string(x), o.ensureASCII)
	case *list:
		if x.kind != kList && x.kind != kTuple {
			return fmt.Errorf("TypeError: Object of type %s is not JSON serializable", typeName(x))
		}
		if len(x.items) == 0 {
			b.WriteString("[]")
			return nil
		}
		b.WriteString("[")
		for i, it := range x.items {
			if i > 0 {
				b.WriteString(o.itemSep)
			}
			newline(b, o, level+1)
			if err := writeJSON(b, it, o, level+1); err != nil {
				return err
			}
		}
		newline(b, o, level)
		b.WriteString("]")
	case *dict:
		if len(x.keys) == 0 {
			b.WriteString("{}")
			return nil
		}
		type kv struct {
			k string
			v any
		}
		items := make([]kv, len(x.keys))
		for i, k := range x.keys {
			var ks string
			switch kk := k.(type) {
			case string:
				ks = kk
			case markup:
				ks = string(kk)
			case nil, bool, int64, float64:
				var kb strings.Builder
				_ = writeJSON(&kb, kk, o, level)
				ks = kb.String()
			default:
				return fmt.Errorf("TypeError: keys must be str, int, float, bool or None, not %s", typeName(k))
			}
			items[i] = kv{ks, x.vals[i]}
		}
		if o.sortKeys {
			sort.SliceStable(items, func(i, j int) bool { return items[i].k < items[j].k })
		}
		b.WriteString("{")
		for i, it := range items {
			if i > 0 {
				b.WriteString(o.itemSep)
			}
			newline(b, o, level+1)
			writeJSONString(b, it.k, o.ensureASCII)
			b.WriteString(o.keySep)
			if err := writeJSON(b, it.v, o, level+1); err != nil {
				return err
			}
		}
		newline(b, o, level)
		b.WriteString("}")
	default:
		return fmt.Errorf("TypeError: Object of type %s is not JSON serializable", typeName(v))
	}
	return nil
}

func newline(b *strings.Builder, o jsonOptions, level int) {
	if o.indent == nil {
		return
	}
	b.WriteByte('\n')
	for range level {
		b.WriteString(*o.indent)
	}
}

// writeJSONString writes s as json.dumps does: \" \\ \n \r \t \b \f,
// other control characters as \u00XX, and with ensureASCII everything
// past ASCII as \uXXXX (surrogate pairs above the BMP).
func writeJSONString(b *strings.Builder, s string, ensureASCII bool) {
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			switch {
			case r < 0x20:
				fmt.Fprintf(b, `\u%04x`, r)
			case ensureASCII && r > 0x7e && r < 0x10000:
				fmt.Fprintf(b, `\u%04x`, r)
			case ensureASCII && r >= 0x10000:
				r -= 0x10000
				fmt.Fprintf(b, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
			default:
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
}
