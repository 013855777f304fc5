package grammar

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
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

// decodeOrdered decodes one JSON document into *jsonObject, []any, string,
// json.Number, bool and nil values, objects in file order.
func decodeOrdered(data []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	v, err := decodeValue(d, 0)
	if err != nil {
		return nil, err
	}
	if _, err := d.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("grammar: data after the JSON value")
	}
	return v, nil
}

func decodeValue(d *json.Decoder, depth int) (any, error) {
	if depth > maxJSONDepth {
		return nil, fmt.Errorf("grammar: JSON nested deeper than %d", maxJSONDepth)
	}
	t, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch t := t.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := &jsonObject{}
			for d.More() {
				k, err := d.Token()
				if err != nil {
					return nil, err
				}
				v, err := decodeValue(d, depth+1)
				if err != nil {
					return nil, err
				}
				o.keys = append(o.keys, k.(string))
				o.vals = append(o.vals, v)
			}
			_, err := d.Token()
			return o, err
		case '[':
			a := []any{}
			for d.More() {
				v, err := decodeValue(d, depth+1)
				if err != nil {
					return nil, err
				}
				a = append(a, v)
			}
			_, err := d.Token()
			return a, err
		}
		return nil, fmt.Errorf("grammar: unexpected %v", t)
	default:
		return t, nil
	}
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
	case json.Number:
		b.WriteString(v.String())
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

// subschemas is s itself and the schemas it combines (through $ref,
// allOf, anyOf, oneOf), depth-first.
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
		return nil, fmt.Errorf("only local references (#/...) are supported, not %q", ref)
	}
	cur := r.root
	for _, part := range strings.Split(ref[2:], "/") {
		part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		part = unescapePointer(part)
		switch c := cur.(type) {
		case *jsonObject:
			v, ok := c.get(part)
			if !ok {
				return nil, fmt.Errorf("reference %q: no %q", ref, part)
			}
			cur = v
		case []any:
			var i int
			if _, err := fmt.Sscanf(part, "%d", &i); err != nil || i < 0 || i >= len(c) {
				return nil, fmt.Errorf("reference %q: no index %q", ref, part)
			}
			cur = c[i]
		default:
			return nil, fmt.Errorf("reference %q: %q is not in an object", ref, part)
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
			var v byte
			if _, err := fmt.Sscanf(s[i+1:i+3], "%02x", &v); err == nil {
				b.WriteByte(v)
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
