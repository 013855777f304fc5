package grammar

import (
	"bytes"
	"errors"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// jsonObject is a JSON object that keeps its keys' order.
type jsonObject struct {
	keys []string
	vals []any
}

func (o *jsonObject) get(k string) (any, bool) {
	for i, key := range o.keys {
		if key == k {
			return o.vals[i], true
		}
	}
	return nil, false
}

// maxJSONDepth bounds nesting when decoding schemas and instances.
const maxJSONDepth = 512

// jsonNumber is a JSON number's text.
type jsonNumber string

// Float64 is the number's value.
func (n jsonNumber) Float64() (float64, error) { return strconv.ParseFloat(string(n), 64) }

// errJSON is wrapped by every JSON syntax error.
var errJSON = errors.New("grammar: invalid JSON")

// decodeOrdered decodes one JSON document (RFC 8259) into *jsonObject,
// []any, string, jsonNumber, bool and nil values, objects in file order.
func decodeOrdered(data []byte) (any, error) {
	p := &jsonParser{s: data}
	p.ws()
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	if p.ws(); p.i != len(p.s) {
		return nil, p.errf("data after the JSON value")
	}
	return v, nil
}

type jsonParser struct {
	s []byte
	i int
}

func (p *jsonParser) errf(msg string) error {
	return errorf("%w: %s at offset %d", errJSON, msg, p.i)
}

func (p *jsonParser) ws() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '\n' || p.s[p.i] == '\r') {
		p.i++
	}
}

func (p *jsonParser) value(depth int) (any, error) {
	if depth > maxJSONDepth {
		return nil, p.errf("nested too deep")
	}
	if p.i >= len(p.s) {
		return nil, p.errf("unexpected end")
	}
	switch c := p.s[p.i]; {
	case c == '{':
		p.i++
		o := &jsonObject{}
		p.ws()
		if p.i < len(p.s) && p.s[p.i] == '}' {
			p.i++
			return o, nil
		}
		for {
			p.ws()
			if p.i >= len(p.s) || p.s[p.i] != '"' {
				return nil, p.errf("expecting a key")
			}
			k, err := p.str()
			if err != nil {
				return nil, err
			}
			p.ws()
			if p.i >= len(p.s) || p.s[p.i] != ':' {
				return nil, p.errf("expecting :")
			}
			p.i++
			p.ws()
			v, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			o.keys = append(o.keys, k)
			o.vals = append(o.vals, v)
			p.ws()
			if p.i < len(p.s) && p.s[p.i] == ',' {
				p.i++
				continue
			}
			if p.i < len(p.s) && p.s[p.i] == '}' {
				p.i++
				return o, nil
			}
			return nil, p.errf("expecting , or }")
		}
	case c == '[':
		p.i++
		a := []any{}
		p.ws()
		if p.i < len(p.s) && p.s[p.i] == ']' {
			p.i++
			return a, nil
		}
		for {
			p.ws()
			v, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
			p.ws()
			if p.i < len(p.s) && p.s[p.i] == ',' {
				p.i++
				continue
			}
			if p.i < len(p.s) && p.s[p.i] == ']' {
				p.i++
				return a, nil
			}
			return nil, p.errf("expecting , or ]")
		}
	case c == '"':
		return p.str()
	case c == 't' || c == 'f' || c == 'n':
		for _, lit := range []struct {
			text string
			v    any
		}{{"true", true}, {"false", false}, {"null", nil}} {
			if bytes.HasPrefix(p.s[p.i:], []byte(lit.text)) {
				p.i += len(lit.text)
				return lit.v, nil
			}
		}
		return nil, p.errf("unknown literal")
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	}
	return nil, p.errf("unexpected character")
}

func (p *jsonParser) number() (jsonNumber, error) {
	start := p.i
	digits := func() int {
		n := 0
		for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	if p.s[p.i] == '-' {
		p.i++
	}
	if p.i < len(p.s) && p.s[p.i] == '0' {
		p.i++
	} else if digits() == 0 {
		return "", p.errf("bad number")
	}
	if p.i < len(p.s) && p.s[p.i] == '.' {
		p.i++
		if digits() == 0 {
			return "", p.errf("bad number")
		}
	}
	if p.i < len(p.s) && (p.s[p.i] == 'e' || p.s[p.i] == 'E') {
		p.i++
		if p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return "", p.errf("bad number")
		}
	}
	return jsonNumber(p.s[start:p.i]), nil
}

func (p *jsonParser) str() (string, error) {
	p.i++ // the opening quote
	var b []byte
	for {
		if p.i >= len(p.s) {
			return "", p.errf("unterminated string")
		}
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			return string(b), nil
		case c < 0x20:
			return "", p.errf("control character in a string")
		case c != '\\':
			b = append(b, c)
			p.i++
			continue
		}
		if p.i+1 >= len(p.s) {
			return "", p.errf("unterminated escape")
		}
		e := p.s[p.i+1]
		p.i += 2
		switch e {
		case '"', '\\', '/':
			b = append(b, e)
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r, ok := p.hex4()
			if !ok {
				return "", p.errf("bad \\u escape")
			}
			if utf16.IsSurrogate(r) {
				r2 := rune(-1)
				if p.i+1 < len(p.s) && p.s[p.i] == '\\' && p.s[p.i+1] == 'u' {
					p.i += 2
					if r2, ok = p.hex4(); !ok {
						return "", p.errf("bad \\u escape")
					}
				}
				r = utf16.DecodeRune(r, r2)
			}
			b = utf8.AppendRune(b, r)
		default:
			return "", p.errf("unknown escape")
		}
	}
}

func (p *jsonParser) hex4() (rune, bool) {
	if p.i+4 > len(p.s) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(p.s[p.i:p.i+4]), 16, 32)
	if err != nil {
		return 0, false
	}
	p.i += 4
	return rune(v), true
}

// writeCompact serializes v without spaces: strings with only ", \ and
// control characters escaped, objects in their keys' order.
func writeCompact(b *strings.Builder, v any) {
	switch v := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		if v {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case jsonNumber:
		b.WriteString(string(v))
	case string:
		writeString(b, v)
	case []any:
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			writeCompact(b, e)
		}
		b.WriteByte(']')
	case *jsonObject:
		b.WriteByte('{')
		for i, k := range v.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, k)
			b.WriteByte(':')
			writeCompact(b, v.vals[i])
		}
		b.WriteByte('}')
	}
}

func writeString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for _, c := range s {
		if e, ok := jsonEscape(c); ok {
			b.WriteString(e)
		} else {
			b.WriteRune(c)
		}
	}
	b.WriteByte('"')
}

// SerializeInstance writes a JSON instance compactly, as the MaskBench
// engines expect it: each object's keys in its schema's properties order,
// then its remaining keys in their file order; strings escape only ", \
// and control characters. schema may be nil (file order throughout).
func SerializeInstance(schema, instance []byte) (string, error) {
	v, err := decodeOrdered(instance)
	if err != nil {
		return "", err
	}
	var s any
	if schema != nil {
		if s, err = decodeOrdered(schema); err != nil {
			return "", err
		}
	}
	r := &resolver{root: s}
	v = r.reorder(v, s, 0)
	var b strings.Builder
	writeCompact(&b, v)
	return b.String(), nil
}

// reorder puts v's object keys in the order of the properties its schema
// s lists (following $ref, allOf, anyOf and oneOf and items as far as they
// name properties).
func (r *resolver) reorder(v, s any, depth int) any {
	if depth > maxJSONDepth {
		return v
	}
	switch v := v.(type) {
	case *jsonObject:
		s = r.narrow(v, s, 0)
		order := r.propertyOrder(s, 0)
		o := &jsonObject{}
		used := make([]bool, len(v.keys))
		for _, name := range order {
			for i, k := range v.keys {
				if !used[i] && k == name {
					used[i] = true
					o.keys = append(o.keys, k)
					o.vals = append(o.vals, r.reorder(v.vals[i], r.propertySchema(s, k, 0), depth+1))
				}
			}
		}
		for i, k := range v.keys {
			if !used[i] {
				o.keys = append(o.keys, k)
				o.vals = append(o.vals, r.reorder(v.vals[i], r.propertySchema(s, k, 0), depth+1))
			}
		}
		return o
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = r.reorder(e, r.itemSchema(s, i, 0), depth+1)
		}
		return out
	}
	return v
}

// narrow is s with every anyOf and oneOf it reaches (through $ref and
// allOf) cut to the first branch that object v can be valid against
// (plausible), so that v's keys are ordered by the branch the grammar
// follows for it, not by the branches' properties merged; an anyOf or
// oneOf with no such branch is kept whole.
func (r *resolver) narrow(v *jsonObject, s any, depth int) any {
	o, ok := s.(*jsonObject)
	if !ok || depth > 32 {
		return s
	}
	out := &jsonObject{}
	var parts []any
	for i, k := range o.keys {
		val := o.vals[i]
		switch k {
		case "$ref":
			if str, ok := val.(string); ok {
				if t, err := r.resolve(str); err == nil {
					parts = append(parts, r.narrow(v, t, depth+1))
					continue
				}
			}
		case "allOf":
			if arr, ok := val.([]any); ok {
				for _, e := range arr {
					parts = append(parts, r.narrow(v, e, depth+1))
				}
				continue
			}
		case "anyOf", "oneOf":
			if arr, ok := val.([]any); ok {
				if b := slices.IndexFunc(arr, func(b any) bool { return r.plausible(v, b, depth+1) }); b >= 0 {
					parts = append(parts, r.narrow(v, arr[b], depth+1))
					continue
				}
			}
		}
		out.keys = append(out.keys, k)
		out.vals = append(out.vals, val)
	}
	if len(parts) > 0 {
		out.keys = append(out.keys, "allOf")
		out.vals = append(out.vals, parts)
	}
	return out
}

// plausible reports whether object v passes the checks of schema s (and
// what it reaches through $ref and allOf) that tell objects apart: type,
// required, const and enum properties, and additionalProperties false.
func (r *resolver) plausible(v *jsonObject, s any, depth int) bool {
	if s == false {
		return false
	}
	ok := true
	closed := false
	named := map[string]bool{}
	var walk func(s any, depth int)
	walk = func(s any, depth int) {
		o, isObj := s.(*jsonObject)
		if !isObj || depth > 32 || !ok {
			return
		}
		if t, has := o.get("type"); has {
			switch t := t.(type) {
			case string:
				ok = ok && t == "object"
			case []any:
				ok = ok && slices.Contains(t, any("object"))
			}
		}
		if req, has := o.get("required"); has {
			if arr, isArr := req.([]any); isArr {
				for _, n := range arr {
					if name, isStr := n.(string); isStr {
						if _, present := v.get(name); !present {
							ok = false
						}
					}
				}
			}
		}
		if p, has := o.get("properties"); has {
			if po, isObj := p.(*jsonObject); isObj {
				for i, name := range po.keys {
					named[name] = true
					ps, isObj := po.vals[i].(*jsonObject)
					val, present := v.get(name)
					if !isObj || !present {
						continue
					}
					if c, has := ps.get("const"); has && !sameJSON(c, val) {
						ok = false
					}
					if e, has := ps.get("enum"); has {
						if arr, isArr := e.([]any); isArr && !slices.ContainsFunc(arr, func(x any) bool { return sameJSON(x, val) }) {
							ok = false
						}
					}
				}
			}
		}
		if ap, has := o.get("additionalProperties"); has && ap == false {
			closed = true
		}
		if ref, has := o.get("$ref"); has {
			if str, isStr := ref.(string); isStr {
				if t, err := r.resolve(str); err == nil {
					walk(t, depth+1)
				}
			}
		}
		if all, has := o.get("allOf"); has {
			if arr, isArr := all.([]any); isArr {
				for _, e := range arr {
					walk(e, depth+1)
				}
			}
		}
	}
	walk(s, depth)
	if ok && closed {
		for _, k := range v.keys {
			ok = ok && named[k]
		}
	}
	return ok
}

// sameJSON reports whether two decoded values are the same JSON value
// (compared by their compact serializations).
func sameJSON(a, b any) bool {
	var x, y strings.Builder
	writeCompact(&x, a)
	writeCompact(&y, b)
	return x.String() == y.String()
}

// subschemas is s itself and the schemas it combines (through $ref,
// allOf, anyOf, oneOf, not of not), depth-first.
func (r *resolver) subschemas(s any, depth int, f func(*jsonObject)) {
	o, ok := s.(*jsonObject)
	if !ok || depth > 32 {
		return
	}
	f(o)
	if ref, ok := o.get("$ref"); ok {
		if str, ok := ref.(string); ok {
			if t, err := r.resolve(str); err == nil {
				r.subschemas(t, depth+1, f)
			}
		}
	}
	if n, ok := o.get("not"); ok { // not of not S is S
		if no, ok := n.(*jsonObject); ok {
			if nn, ok := no.get("not"); ok {
				r.subschemas(nn, depth+1, f)
			}
		}
	}
	for _, kw := range []string{"allOf", "anyOf", "oneOf"} {
		if l, ok := o.get(kw); ok {
			if arr, ok := l.([]any); ok {
				for _, e := range arr {
					r.subschemas(e, depth+1, f)
				}
			}
		}
	}
}

// propertyOrder is the properties s names (through $ref, allOf, anyOf
// and oneOf), then the required names among none of them, as the
// grammar orders them.
func (r *resolver) propertyOrder(s any, depth int) []string {
	var names []string
	seen := map[string]bool{}
	r.subschemas(s, depth, func(o *jsonObject) {
		if p, ok := o.get("properties"); ok {
			if po, ok := p.(*jsonObject); ok {
				for _, k := range po.keys {
					if !seen[k] {
						seen[k] = true
						names = append(names, k)
					}
				}
			}
		}
	})
	r.subschemas(s, depth, func(o *jsonObject) {
		req, _ := o.get("required")
		list, _ := req.([]any)
		for _, n := range list {
			if k, ok := n.(string); ok && !seen[k] {
				seen[k] = true
				names = append(names, k)
			}
		}
	})
	return names
}

func (r *resolver) propertySchema(s any, name string, depth int) any {
	var found any
	r.subschemas(s, depth, func(o *jsonObject) {
		if found != nil {
			return
		}
		if p, ok := o.get("properties"); ok {
			if po, ok := p.(*jsonObject); ok {
				if ps, ok := po.get(name); ok {
					found = ps
				}
			}
		}
	})
	if found == nil {
		// a key that a patternProperties pattern matches takes its schema
		r.subschemas(s, depth, func(o *jsonObject) {
			pp, _ := o.get("patternProperties")
			po, _ := pp.(*jsonObject)
			if found != nil || po == nil {
				return
			}
			for i, p := range po.keys {
				e, err := regexToGBNF(p)
				if err != nil {
					continue
				}
				if m, err := componentMatcher(e); err == nil && matchesContent(m, name) {
					found = po.vals[i]
					return
				}
			}
		})
	}
	if found == nil {
		r.subschemas(s, depth, func(o *jsonObject) {
			if found == nil {
				if ap, ok := o.get("additionalProperties"); ok {
					found = ap
				}
			}
		})
	}
	return found
}

func (r *resolver) itemSchema(s any, i int, depth int) any {
	var found any
	r.subschemas(s, depth, func(o *jsonObject) {
		if found != nil {
			return
		}
		if p, ok := o.get("prefixItems"); ok {
			if arr, ok := p.([]any); ok && i < len(arr) {
				found = arr[i]
				return
			}
		}
		if it, ok := o.get("items"); ok {
			if arr, ok := it.([]any); ok {
				if i < len(arr) {
					found = arr[i]
				}
				return
			}
			found = it
		}
	})
	return found
}

// resolver follows local JSON pointers ("#", "#/definitions/x") in root.
type resolver struct {
	root any
}

func (r *resolver) resolve(ref string) (any, error) {
	if ref == "#" {
		return r.root, nil
	}
	if !strings.HasPrefix(ref, "#/") {
		return nil, errorf("only local references (#/...) are supported, not %q", ref)
	}
	cur := r.root
	for _, part := range strings.Split(ref[2:], "/") {
		part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		part = unescapePointer(part)
		switch c := cur.(type) {
		case *jsonObject:
			v, ok := c.get(part)
			if !ok {
				return nil, errorf("reference %q: no %q", ref, part)
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(c) {
				return nil, errorf("reference %q: no index %q", ref, part)
			}
			cur = c[i]
		default:
			return nil, errorf("reference %q: %q is not in an object", ref, part)
		}
	}
	return cur, nil
}

// unescapePointer undoes percent-encoding in a URI fragment pointer.
func unescapePointer(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
				b.WriteByte(byte(v))
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
