package grammar

import (
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// merge combines the schemas of an allOf (and a $ref with siblings) into
// one, where that is exact: properties are merged property by property,
// required lists joined, types intersected; any other keyword must agree
// where it appears twice, and additionalProperties other than true is
// only kept when no other branch adds properties it would forbid.
func (g *schemaGen) merge(list []any, path string, depth int) (*jsonObject, error) {
	if depth > 16 {
		return nil, g.errf(path, "allOf", ErrTooLarge, "nested too deep")
	}
	var flat []*jsonObject
	for i, s := range list {
		switch s := s.(type) {
		case bool:
			if !s {
				return nil, g.errf(path, "allOf", ErrUnsupported, "branch %d is false", i)
			}
			continue
		case *jsonObject:
			o := s
			if ref, ok := o.get("$ref"); ok {
				rs, _ := ref.(string)
				t, err := g.resolve(rs)
				if err != nil {
					return nil, g.errf(path, "$ref", ErrUnsupported, "%v", err)
				}
				parts := []any{t}
				if !g.oldDraft && hasAssertions(o, "$ref") {
					parts = append(parts, without(o, "$ref"))
				}
				m, err := g.merge(parts, path, depth+1)
				if err != nil {
					return nil, err
				}
				o = m
			}
			if a, ok := o.get("allOf"); ok {
				al, _ := a.([]any)
				m, err := g.merge(append(slices.Clone(al), without(o, "allOf")), path, depth+1)
				if err != nil {
					return nil, err
				}
				o = m
			}
			flat = append(flat, o)
		default:
			return nil, g.errf(path, "allOf", ErrSchema, "branch %d is not a schema", i)
		}
	}
	out := &jsonObject{}
	set := func(k string, v any) {
		for i, key := range out.keys {
			if key == k {
				out.vals[i] = v
				return
			}
		}
		out.keys = append(out.keys, k)
		out.vals = append(out.vals, v)
	}
	var types []string
	typed := false
	props := &jsonObject{}
	hasProps := false
	var required []any
	for _, o := range flat {
		for i, k := range o.keys {
			v := o.vals[i]
			if annotations[k] || !knownKeyword(k) {
				continue
			}
			switch k {
			case "type":
				ts, err := schemaTypes(&jsonObject{keys: []string{"type"}, vals: []any{v}})
				if err != nil {
					return nil, g.errf(path, "type", ErrSchema, "%v", err)
				}
				if slices.Contains(ts, "number") {
					ts = append(ts, "integer")
				}
				if !typed {
					types, typed = ts, true
				} else {
					types = slices.DeleteFunc(types, func(t string) bool {
						return !slices.Contains(ts, t)
					})
				}
			case "properties":
				po, ok := v.(*jsonObject)
				if !ok {
					return nil, g.errf(path, "properties", ErrSchema, "not an object")
				}
				hasProps = true
				for j, name := range po.keys {
					if prev, ok := props.get(name); ok {
						for x, pk := range props.keys {
							if pk != name {
								continue
							}
							if prev == false || po.vals[j] == false {
								props.vals[x] = false // nothing is valid against both
							} else {
								props.vals[x] = &jsonObject{keys: []string{"allOf"}, vals: []any{[]any{prev, po.vals[j]}}}
							}
						}
						continue
					}
					props.keys = append(props.keys, name)
					props.vals = append(props.vals, po.vals[j])
				}
			case "required":
				l, _ := v.([]any)
				for _, r := range l {
					if !slices.Contains(required, r) {
						required = append(required, r)
					}
				}
			case "items":
				if prev, ok := out.get("items"); ok {
					if _, arr := v.([]any); arr {
						return nil, g.errf(path, "allOf", ErrUnsupported, "items arrays in two branches")
					}
					set("items", &jsonObject{keys: []string{"allOf"}, vals: []any{[]any{prev, v}}})
					continue
				}
				set(k, v)
			default:
				if prev, ok := out.get(k); ok && !reflect.DeepEqual(prev, v) {
					return nil, g.errf(path, "allOf", ErrUnsupported, "%s differs between branches", k)
				}
				set(k, v)
			}
		}
	}
	// additionalProperties must not forbid what another branch adds
	for _, o := range flat {
		ap, ok := o.get("additionalProperties")
		if !ok || ap == true {
			continue
		}
		own := map[string]bool{}
		if p, ok := o.get("properties"); ok {
			if po, ok := p.(*jsonObject); ok {
				for _, k := range po.keys {
					own[k] = true
				}
			}
		}
		for _, k := range props.keys {
			if !own[k] {
				return nil, g.errf(path, "allOf", ErrUnsupported, "additionalProperties of one branch constrains property %q of another", k)
			}
		}
	}
	if typed {
		if slices.Contains(types, "number") {
			types = slices.DeleteFunc(types, func(t string) bool { return t == "integer" })
		}
		if len(types) == 0 {
			return nil, g.errf(path, "type", ErrUnsupported, "the branches' types do not intersect")
		}
		tv := make([]any, len(types))
		for i, t := range types {
			tv[i] = t
		}
		set("type", tv)
	}
	if hasProps {
		set("properties", props)
	}
	if len(required) > 0 {
		set("required", required)
	}
	return out, nil
}

// intRange is a GBNF expression for the integers in [lo, hi] (a side
// without has… is unbounded), written without leading zeros or "-0".
func intRange(lo, hi int64, hasLo, hasHi bool) string {
	var alts []string
	if !hasLo || lo < 0 {
		nlo := int64(1)
		if hasHi && hi < 0 {
			nlo = -hi
		}
		alts = append(alts, `"-" `+natRange(nlo, -lo, hasLo))
	}
	if !hasHi || hi >= 0 {
		plo := int64(0)
		if hasLo && lo > 0 {
			plo = lo
		}
		alts = append(alts, natRange(plo, hi, hasHi))
	}
	return strings.Join(alts, " | ")
}

// natRange is the naturals in [lo, hi] (hi unbounded without hasHi).
func natRange(lo, hi int64, hasHi bool) string {
	ls := strconv.FormatInt(lo, 10)
	last := len(ls)
	if hasHi {
		last = len(strconv.FormatInt(hi, 10))
	}
	var alts []string
	for n := len(ls); n <= last; n++ {
		a := ls
		if n > len(ls) {
			a = "1" + strings.Repeat("0", n-1)
		}
		b := strings.Repeat("9", n)
		if hasHi && n == last {
			b = strconv.FormatInt(hi, 10)
		}
		alts = append(alts, "("+sameLen(a, b)+")")
	}
	if !hasHi {
		alts = append(alts, sprintf("[1-9] [0-9]{%d,}", len(ls)))
	}
	return "(" + strings.Join(alts, " | ") + ")"
}

// sameLen matches the digit strings of a's length between a and b.
func sameLen(a, b string) string {
	if a == b {
		return `"` + a + `"`
	}
	n := len(a)
	if a[0] == b[0] {
		return `"` + a[:1] + `" ` + sameLen(a[1:], b[1:])
	}
	rest := func(s string) string {
		if s == "" {
			return ""
		}
		return sprintf(" [0-9]{%d}", len(s))
	}
	lowAll := strings.Trim(a[1:], "0") == ""
	highAll := strings.Trim(b[1:], "9") == ""
	var alts []string
	mlo, mhi := a[0]+1, b[0]-1
	if lowAll {
		mlo = a[0]
	} else {
		alts = append(alts, `"`+a[:1]+`" `+sameLen(a[1:], strings.Repeat("9", n-1)))
	}
	if highAll {
		mhi = b[0]
	}
	if mlo <= mhi {
		alts = append(alts, sprintf("[%c-%c]", mlo, mhi)+rest(a[1:]))
	}
	if !highAll {
		alts = append(alts, `"`+b[:1]+`" `+sameLen(strings.Repeat("0", n-1), b[1:]))
	}
	return "(" + strings.Join(alts, " | ") + ")"
}
