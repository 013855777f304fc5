package grammar

import (
	"errors"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
)

// Schema conversion caps.
const (
	// MaxEnumValues caps an enum's values.
	MaxEnumValues = 4096
	// maxSchemaRules caps the rules a schema may produce.
	maxSchemaRules = 20000
	// maxSchemaGrammarBytes caps the GBNF a schema may produce.
	maxSchemaGrammarBytes = 8 << 20
	maxSchemaDepth        = 128
	// maxCount caps minLength, maxLength, minItems and maxItems (counts
	// past MaxRepetition are nested repetitions).
	maxCount = maxRepetition * maxRepetition
)

// ErrSchema: the schema is not a valid JSON Schema document.
var ErrSchema = errors.New("grammar: invalid JSON schema")

// SchemaError is a schema this package cannot turn into an exact grammar
// (wrapping ErrUnsupported or ErrTooLarge) or a malformed one (ErrSchema):
// the JSON pointer of the subschema and the keyword at fault.
type SchemaError struct {
	Path    string
	Keyword string
	Msg     string
	Err     error
	// the schema allows no value (a branch of anyOf or oneOf that may be
	// dropped)
	empty bool
}

func (e *SchemaError) Error() string {
	return sprintf("%v: %s at %s: %s", e.Err, e.Keyword, e.Path, e.Msg)
}

// Unwrap returns ErrUnsupported, ErrTooLarge or ErrSchema.
func (e *SchemaError) Unwrap() error { return e.Err }

// Warning is a keyword FromJSONSchemaWarnings accepted without enforcing
// it: a "format" that JSON Schema does not define ("int32", "url"), which
// validators read as an annotation, so any value of the subschema's type
// passes. Path is the JSON pointer of the subschema, Value the keyword's
// value.
type Warning struct {
	Path, Keyword, Value string
}

func (w Warning) String() string {
	return sprintf("%s %q at %s is not enforced: JSON Schema defines no such format (an annotation)", w.Keyword, w.Value, w.Path)
}

// FromJSONSchema writes a GBNF grammar (rule root) that matches exactly
// the compact JSON serializations (no whitespace; object properties in the
// schema's properties order, then any others; strings with only ", \ and
// control characters escaped, other escapes accepted where the content is
// unconstrained) of the instances valid against schema. A construct that
// cannot be enforced exactly is a *SchemaError naming the keyword, never a
// looser grammar; the grammar may be tighter (it refuses some valid
// instances: other serializations, -0, 1.0 as an integer, leap seconds,
// e-mail addresses outside the dot-atom form).
func FromJSONSchema(schema []byte) (string, error) {
	src, _, err := FromJSONSchemaWarnings(schema)
	return src, err
}

// FromJSONSchemaWarnings is FromJSONSchema, with the keywords it accepted
// without enforcing them (Warning), each once, in the order met. A
// "format" that is not a string is a *SchemaError (ErrSchema).
func FromJSONSchemaWarnings(schema []byte) (string, []Warning, error) {
	root, err := decodeOrdered(schema)
	if err != nil {
		return "", nil, &SchemaError{Path: "#", Keyword: "schema", Msg: detail(err, ErrSchema), Err: ErrSchema}
	}
	g := &schemaGen{resolver: resolver{root: root}, refRule: map[string]string{}, bodyRule: map[string]string{}}
	if o, ok := root.(*jsonObject); ok {
		if v, ok := o.get("$schema"); ok {
			if s, ok := v.(string); ok && (strings.Contains(s, "draft-04") || strings.Contains(s, "draft-06") || strings.Contains(s, "draft-07") || strings.Contains(s, "draft-03")) {
				g.oldDraft = true
			}
		}
	}
	expr, err := g.gen(root, "#", 0)
	if err != nil {
		return "", nil, err
	}
	var b strings.Builder
	b.WriteString("root ::= " + expr + "\n")
	b.WriteString(jsonBaseRules)
	for _, r := range g.rules {
		b.WriteString(r)
		b.WriteByte('\n')
	}
	return b.String(), g.warnings, nil
}

// jsonBaseRules: any JSON value, compact.
const jsonBaseRules = `json-value ::= json-object | json-array | json-string | json-number | "true" | "false" | "null"
json-object ::= "{" ( json-string ":" json-value ( "," json-string ":" json-value )* )? "}"
json-array ::= "[" ( json-value ( "," json-value )* )? "]"
json-string ::= "\"" json-char* "\""
json-char ::= [^"\\\x00-\x1F] | "\\" ( ["\\/bfnrt] | "u" [0-9a-fA-F]{4} )
json-char-ns ::= [^"\\\x00-\x1F] | "\\" ( ["\\/bfnrt] | "u" ( [0-9a-cA-Ce-fE-F] [0-9a-fA-F]{3} | [dD] [0-7] [0-9a-fA-F]{2} ) )
json-raw ::= [^"\\\x00-\x1F]
json-int ::= "-"? ( "0" | [1-9] [0-9]* )
json-number ::= json-int ( "." [0-9]+ )? ( [eE] [-+]? [0-9]+ )?
json-nonneg ::= ( "0" | [1-9] [0-9]* ) ( "." [0-9]+ )? ( [eE] [-+]? [0-9]+ )?
`

type schemaGen struct {
	resolver
	oldDraft bool
	rules    []string
	refRule  map[string]string
	bodyRule map[string]string
	size     int
	nrules   int
	warnings []Warning
	warned   map[Warning]bool
}

// format reads o's format: "" when absent; a name JSON Schema does not
// define is noted as a Warning (and read as absent by the caller); one
// that is not a string is an ErrSchema.
func (g *schemaGen) format(o *jsonObject, path string) (string, error) {
	v, ok := o.get("format")
	if !ok {
		return "", nil
	}
	f, ok := v.(string)
	if !ok {
		return "", g.errf(path, "format", ErrSchema, "not a string")
	}
	if !standardFormats[f] {
		w := Warning{Path: path, Keyword: "format", Value: f}
		if !g.warned[w] {
			if g.warned == nil {
				g.warned = map[Warning]bool{}
			}
			g.warned[w] = true
			g.warnings = append(g.warnings, w)
		}
	}
	return f, nil
}

func (g *schemaGen) errf(path, kw string, err error, format string, a ...any) error {
	for i, x := range a {
		if e, ok := x.(error); ok {
			a[i] = detail(e, err)
		}
	}
	return &SchemaError{Path: path, Keyword: kw, Msg: sprintf(format, a...), Err: err}
}

// detail is the text of e, an error of this package inside a
// SchemaError wrapping kind, without what the SchemaError already says:
// the package's "grammar: " and kind's own text ("unsupported: pattern
// at #: pattern …", not "…: grammar: unsupported: pattern …").
func detail(e, kind error) string {
	s := e.Error()
	if t, ok := strings.CutPrefix(s, kind.Error()+": "); ok {
		return t
	}
	return strings.TrimPrefix(s, "grammar: ")
}

// rule names body (reusing the rule of an identical body).
func (g *schemaGen) rule(body string) (string, error) {
	if name, ok := g.bodyRule[body]; ok {
		return name, nil
	}
	g.nrules++
	name := "r" + strconv.Itoa(g.nrules)
	return name, g.define(name, body)
}

func (g *schemaGen) define(name, body string) error {
	g.size += len(name) + len(body) + 6
	if g.nrules > maxSchemaRules || g.size > maxSchemaGrammarBytes {
		return &SchemaError{Path: "#", Keyword: "schema", Msg: "the grammar passes its size caps", Err: ErrTooLarge}
	}
	g.bodyRule[body] = name
	g.rules = append(g.rules, name+" ::= "+body)
	return nil
}

// annotation keywords: no assertion, ignored.
var annotations = map[string]bool{
	"$schema": true, "$id": true, "id": true, "$comment": true, "title": true, "description": true,
	"default": true, "examples": true, "example": true, "readOnly": true, "writeOnly": true,
	"deprecated": true, "$defs": true, "definitions": true, "$anchor": true, "$vocabulary": true,
	"contentMediaType": true, "contentEncoding": true, "contentSchema": true, "discriminator": true,
}

// unsupported assertion keywords: a schema using them is refused.
var unsupported = []string{"not", "if", "then", "else", "dependencies", "dependentRequired",
	"dependentSchemas", "unevaluatedProperties", "unevaluatedItems", "contains",
	"minContains", "maxContains", "$dynamicRef", "$recursiveRef", "$dynamicAnchor", "$recursiveAnchor"}

func (g *schemaGen) gen(s any, path string, depth int) (string, error) {
	if depth > maxSchemaDepth {
		return "", g.errf(path, "schema", ErrTooLarge, "nested deeper than %d", maxSchemaDepth)
	}
	switch s := s.(type) {
	case bool:
		if s {
			return "json-value", nil
		}
		return "", g.errf(path, "false", ErrUnsupported, "the false schema allows no value here")
	case *jsonObject:
		return g.object(s, path, depth)
	}
	return "", g.errf(path, "schema", ErrSchema, "a schema is an object or a boolean")
}

func hasAssertions(o *jsonObject, skip ...string) bool {
	for _, k := range o.keys {
		if !annotations[k] && !slices.Contains(skip, k) && !strings.HasPrefix(k, "x-") && knownKeyword(k) {
			return true
		}
	}
	return false
}

var knownKeywords = map[string]bool{
	"type": true, "enum": true, "const": true, "multipleOf": true, "maximum": true, "exclusiveMaximum": true,
	"minimum": true, "exclusiveMinimum": true, "maxLength": true, "minLength": true, "pattern": true,
	"items": true, "prefixItems": true, "additionalItems": true, "contains": true, "minContains": true,
	"maxContains": true, "maxItems": true, "minItems": true, "uniqueItems": true, "maxProperties": true,
	"minProperties": true, "required": true, "properties": true, "patternProperties": true,
	"additionalProperties": true, "dependentRequired": true, "dependentSchemas": true, "dependencies": true,
	"propertyNames": true, "if": true, "then": true, "else": true, "allOf": true, "anyOf": true, "oneOf": true,
	"not": true, "$ref": true, "unevaluatedItems": true, "unevaluatedProperties": true, "format": true,
	"$dynamicRef": true, "$recursiveRef": true,
}

func knownKeyword(k string) bool { return knownKeywords[k] }

func (g *schemaGen) object(o *jsonObject, path string, depth int) (string, error) {
	if ref, ok := o.get("$ref"); ok {
		str, ok := ref.(string)
		if !ok {
			return "", g.errf(path, "$ref", ErrSchema, "not a string")
		}
		if g.oldDraft || !hasAssertions(o, "$ref") {
			return g.ref(str, path, depth)
		}
		target, err := g.resolve(str)
		if err != nil {
			return "", g.errf(path, "$ref", ErrUnsupported, "%v", err)
		}
		rest := without(o, "$ref")
		m, err := g.merge([]any{target, rest}, path, 0)
		if err != nil {
			return "", err
		}
		return g.object(m, path, depth+1)
	}
	if rw, ok := rewriteDependencies(o); ok {
		return g.object(rw, path, depth+1)
	}
	if v, ok := o.get("not"); ok {
		if rw, ok := rewriteNot(without(o, "not"), v); ok {
			return g.object(rw, path, depth+1)
		}
	}
	if v, ok := o.get("propertyNames"); ok && keysAlwaysValid(v) {
		// every key is a string: {"type": "string"} (zod's z.record) asserts nothing
		o = without(o, "propertyNames")
	}
	for _, k := range unsupported {
		if v, ok := o.get(k); ok {
			if k == "dependencies" || k == "dependentRequired" || k == "dependentSchemas" {
				if vo, ok := v.(*jsonObject); ok && len(vo.keys) == 0 {
					continue
				}
			}
			return "", g.errf(path, k, ErrUnsupported, "not enforced by this engine")
		}
	}
	if v, ok := o.get("patternProperties"); ok {
		vo, ok := v.(*jsonObject)
		if !ok {
			return "", g.errf(path, "patternProperties", ErrSchema, "not an object")
		}
		if ap, _ := o.get("additionalProperties"); len(vo.keys) > 0 && ap != false {
			return "", g.errf(path, "patternProperties", ErrUnsupported, "enforced only beside additionalProperties false")
		}
	}
	if v, ok := o.get("uniqueItems"); ok && v == true {
		return "", g.errf(path, "uniqueItems", ErrUnsupported, "not enforced by this engine")
	}
	if v, ok := o.get("allOf"); ok {
		list, ok := v.([]any)
		if !ok || len(list) == 0 {
			return "", g.errf(path, "allOf", ErrSchema, "not a non-empty array")
		}
		m, err := g.merge(append(slices.Clone(list), without(o, "allOf")), path+"/allOf", 0)
		if err != nil {
			return "", err
		}
		return g.object(m, path, depth+1)
	}
	for _, kw := range []string{"anyOf", "oneOf"} {
		v, ok := o.get(kw)
		if !ok {
			continue
		}
		list, ok := v.([]any)
		if !ok || len(list) == 0 {
			return "", g.errf(path, kw, ErrSchema, "not a non-empty array")
		}
		rest := without(o, kw)
		if kw == "anyOf" {
			if _, also := rest.get("oneOf"); also {
				return "", g.errf(path, "oneOf", ErrUnsupported, "beside anyOf")
			}
		}
		exclusive := false
		if kw == "oneOf" {
			if l, ok := exclusiveRequired(list); ok {
				list, exclusive = l, true
			}
		}
		var branches []*jsonObject
		for i, b := range list {
			bp := sprintf("%s/%s/%d", path, kw, i)
			if b == false {
				continue
			}
			if hasAssertions(rest) {
				m, err := g.merge([]any{b, rest}, bp, 0)
				if err != nil {
					return "", err
				}
				branches = append(branches, m)
				continue
			}
			bo, ok := b.(*jsonObject)
			if b == true {
				bo = &jsonObject{}
			} else if !ok {
				return "", g.errf(bp, kw, ErrSchema, "not a schema")
			}
			branches = append(branches, bo)
		}
		if len(branches) == 0 {
			return "", g.errf(path, kw, ErrUnsupported, "no branch allows a value")
		}
		if kw == "oneOf" && !exclusive {
			// a non-object satisfies every branch that asserts only object
			// keywords: with two such branches no non-object is valid, so
			// every branch may ask for an object
			n := 0
			for _, b := range branches {
				if objectKeywordsOnly(g.deref(b, 0)) {
					n++
				}
			}
			if n >= 2 {
				var objs []*jsonObject
				for i, b := range branches {
					if t, err := effectiveTypes(g.deref(b, 0)); err == nil && !slices.Contains(t, "object") {
						continue // no object satisfies it
					}
					m, err := g.merge([]any{b, &jsonObject{keys: []string{"type"}, vals: []any{"object"}}}, sprintf("%s/%s/%d", path, kw, i), 0)
					if err != nil {
						return "", err
					}
					objs = append(objs, m)
				}
				branches = objs
			}
			if err := g.disjoint(branches, path); err != nil {
				return "", err
			}
		}
		var alts []string
		for i, b := range branches {
			e, err := g.object(b, sprintf("%s/%s/%d", path, kw, i), depth+1)
			var se *SchemaError
			if errors.As(err, &se) && se.empty {
				continue // a branch no value satisfies never matches
			}
			if err != nil {
				return "", err
			}
			alts = append(alts, e)
		}
		if len(alts) == 0 {
			return "", &SchemaError{Path: path, Keyword: kw, Msg: "no branch allows a value", Err: ErrUnsupported, empty: true}
		}
		return g.rule(strings.Join(alts, " | "))
	}
	if v, ok := o.get("const"); ok {
		return g.enum(o, []any{v}, path, "const")
	}
	if v, ok := o.get("enum"); ok {
		list, ok := v.([]any)
		if !ok {
			return "", g.errf(path, "enum", ErrSchema, "not an array")
		}
		return g.enum(o, list, path, "enum")
	}
	types, err := schemaTypes(o)
	if err != nil {
		return "", g.errf(path, "type", ErrSchema, "%v", err)
	}
	var alts []string
	for _, t := range types {
		e, err := g.typed(o, t, path, depth)
		if err != nil {
			return "", err
		}
		if e != "" {
			alts = append(alts, e)
		}
	}
	if len(alts) == 0 {
		return "", g.errf(path, "type", ErrUnsupported, "no type allows a value")
	}
	if len(alts) == 1 {
		return alts[0], nil
	}
	return g.rule(strings.Join(alts, " | "))
}

// maxDependencies caps the dependencies rewritten (2^n branches).
const maxDependencies = 4

// rewriteDependencies writes dependencies, dependentRequired and
// dependentSchemas (at most maxDependencies, beside no anyOf or oneOf) as
// an anyOf: for each key a with its dependency D, "a absent" or "a
// present and D" (D a list of required names, or a schema), every
// combination one branch. false where there are none or too many.
func rewriteDependencies(o *jsonObject) (*jsonObject, bool) {
	type dep struct {
		key string
		d   any
	}
	var deps []dep
	rest := o
	for _, kw := range []string{"dependencies", "dependentRequired", "dependentSchemas"} {
		v, ok := o.get(kw)
		if !ok {
			continue
		}
		vo, ok := v.(*jsonObject)
		if !ok {
			return nil, false
		}
		for i, k := range vo.keys {
			deps = append(deps, dep{k, vo.vals[i]})
		}
		rest = without(rest, kw)
	}
	if len(deps) == 0 || len(deps) > maxDependencies {
		return nil, false
	}
	if _, has := o.get("anyOf"); has {
		return nil, false
	}
	if _, has := o.get("oneOf"); has {
		return nil, false
	}
	branches := [][]any{nil}
	for _, d := range deps {
		absent := &jsonObject{keys: []string{"properties"}, vals: []any{&jsonObject{keys: []string{d.key}, vals: []any{false}}}}
		var present any
		switch dv := d.d.(type) {
		case []any:
			present = &jsonObject{keys: []string{"required"}, vals: []any{append([]any{d.key}, dv...)}}
		case *jsonObject, bool:
			present = &jsonObject{keys: []string{"allOf"}, vals: []any{[]any{&jsonObject{keys: []string{"required"}, vals: []any{[]any{d.key}}}, dv}}}
		default:
			return nil, false
		}
		var next [][]any
		for _, b := range branches {
			next = append(next, append(slices.Clone(b), absent), append(slices.Clone(b), present))
		}
		branches = next
	}
	var anyOf []any
	for _, b := range branches {
		anyOf = append(anyOf, &jsonObject{keys: []string{"allOf"}, vals: []any{b}})
	}
	return &jsonObject{keys: append(slices.Clone(rest.keys), "anyOf"), vals: append(slices.Clone(rest.vals), anyOf)}, true
}

// rewriteNot writes rest ∧ not(n) without not, where that is exact: not
// of not S is S; not of required names is "one of them absent" (an
// object: any other value has them all); not of types is the other types
// (refused for integer without number: a number that is not an integer
// is no type of its own). false for any other not.
func rewriteNot(rest *jsonObject, n any) (*jsonObject, bool) {
	inner, ok := n.(*jsonObject)
	if !ok {
		return nil, false
	}
	var only string
	for _, k := range inner.keys {
		if knownKeyword(k) && !annotations[k] {
			if only != "" {
				return nil, false
			}
			only = k
		}
	}
	v, _ := inner.get(only)
	allOf := func(s any) *jsonObject {
		return &jsonObject{keys: []string{"allOf"}, vals: []any{[]any{rest, s}}}
	}
	switch only {
	case "not":
		return allOf(v), true
	case "required":
		names, _ := v.([]any)
		if len(names) == 0 {
			return nil, false
		}
		if _, has := rest.get("anyOf"); has {
			return nil, false
		}
		var branches []any
		for _, name := range names {
			nm, ok := name.(string)
			if !ok {
				return nil, false
			}
			branches = append(branches, &jsonObject{keys: []string{"type", "properties"},
				vals: []any{"object", &jsonObject{keys: []string{nm}, vals: []any{false}}}})
		}
		out := &jsonObject{keys: append(slices.Clone(rest.keys), "anyOf"), vals: append(slices.Clone(rest.vals), branches)}
		return out, true
	case "type":
		ts, err := schemaTypes(inner)
		if err != nil || slices.Contains(ts, "integer") && !slices.Contains(ts, "number") {
			return nil, false
		}
		var other []any
		for _, t := range []string{"null", "boolean", "object", "array", "number", "string"} {
			if !slices.Contains(ts, t) {
				other = append(other, t)
			}
		}
		if len(other) == 0 {
			return nil, false
		}
		return allOf(&jsonObject{keys: []string{"type"}, vals: []any{other}}), true
	}
	return nil, false
}

// keysAlwaysValid reports whether a propertyNames schema holds for every
// object key: true, or no assertion but "type": "string".
func keysAlwaysValid(v any) bool {
	if v == true {
		return true
	}
	o, ok := v.(*jsonObject)
	if !ok {
		return false
	}
	if t, ok := o.get("type"); ok && t != "string" {
		return false
	}
	return !hasAssertions(o, "type")
}

// exclusiveRequired rewrites a oneOf whose branches assert only
// required (zod's and many schemas' "one of these keys") into branches
// that exclude each other: branch i keeps its required names, forbids
// the one name by which each other branch j asks for more (branch j is
// then invalid exactly when that name is absent), and asks for an object
// (a non-object satisfies every such branch, so at least two: never
// exactly one). A branch that another's names all cover is dropped (it is
// never the only one valid). false where a branch is another shape, or
// some j asks for two or more names beyond branch i's (a disjunction).
func exclusiveRequired(list []any) ([]any, bool) {
	if len(list) < 2 {
		return nil, false
	}
	names := make([][]any, len(list))
	for i, b := range list {
		o, ok := b.(*jsonObject)
		if !ok || hasAssertions(o, "required") {
			return nil, false
		}
		r, _ := o.get("required")
		l, ok := r.([]any)
		if !ok {
			return nil, false
		}
		names[i] = l
	}
	var out []any
	for i := range list {
		forbid := &jsonObject{}
		drop := false
		for j := range list {
			if j == i {
				continue
			}
			var more []any
			for _, n := range names[j] {
				if !slices.Contains(names[i], n) && !slices.Contains(more, n) {
					more = append(more, n)
				}
			}
			switch len(more) {
			case 0:
				drop = true
			case 1:
				name, ok := more[0].(string)
				if !ok {
					return nil, false
				}
				if _, dup := forbid.get(name); !dup {
					forbid.keys = append(forbid.keys, name)
					forbid.vals = append(forbid.vals, false)
				}
			default:
				return nil, false
			}
		}
		if drop {
			continue
		}
		out = append(out, &jsonObject{keys: []string{"type", "required", "properties"}, vals: []any{"object", names[i], forbid}})
	}
	if len(out) == 0 {
		out = []any{false}
	}
	return out, true
}

// without is o less keyword kw.
func without(o *jsonObject, kw string) *jsonObject {
	r := &jsonObject{}
	for i, k := range o.keys {
		if k != kw {
			r.keys = append(r.keys, k)
			r.vals = append(r.vals, o.vals[i])
		}
	}
	return r
}

func (g *schemaGen) ref(ref, path string, depth int) (string, error) {
	if name, ok := g.refRule[ref]; ok {
		return name, nil
	}
	// a chain of bare references that comes back to itself matches nothing
	seen := map[string]bool{ref: true}
	for cur := ref; ; {
		t, err := g.resolve(cur)
		if err != nil {
			return "", g.errf(path, "$ref", ErrUnsupported, "%v", err)
		}
		to, ok := t.(*jsonObject)
		if !ok {
			break
		}
		next, ok := to.get("$ref")
		ns, isStr := next.(string)
		if !ok || !isStr || hasAssertions(to, "$ref") && !g.oldDraft {
			break
		}
		if seen[ns] {
			return "", g.errf(path, "$ref", ErrUnsupported, "reference cycle through %q", ns)
		}
		seen[ns] = true
		cur = ns
	}
	target, err := g.resolve(ref)
	if err != nil {
		return "", g.errf(path, "$ref", ErrUnsupported, "%v", err)
	}
	g.nrules++
	name := "ref" + strconv.Itoa(g.nrules)
	g.refRule[ref] = name
	body, err := g.gen(target, ref, depth+1)
	if err != nil {
		return "", err
	}
	return name, g.define(name, body)
}

func schemaTypes(o *jsonObject) ([]string, error) {
	all := []string{"null", "boolean", "object", "array", "string", "number"}
	v, ok := o.get("type")
	if !ok {
		return all, nil
	}
	var list []string
	switch v := v.(type) {
	case string:
		list = []string{v}
	case []any:
		for _, e := range v {
			s, ok := e.(string)
			if !ok {
				return nil, errorf("type list holds a non-string")
			}
			list = append(list, s)
		}
	default:
		return nil, errorf("type is neither a string nor a list")
	}
	for _, t := range list {
		if !slices.Contains(all, t) && t != "integer" {
			return nil, errorf("unknown type %q", t)
		}
	}
	if slices.Contains(list, "number") {
		list = slices.DeleteFunc(list, func(t string) bool { return t == "integer" })
	}
	return list, nil
}

func (g *schemaGen) enum(o *jsonObject, values []any, path, kw string) (string, error) {
	if len(values) > MaxEnumValues {
		return "", g.errf(path, kw, ErrTooLarge, "%d values (at most %d)", len(values), MaxEnumValues)
	}
	// beside other assertions, a value is kept when the grammar of the
	// others accepts it (that grammar is never looser, so a value kept is
	// valid; one it may refuse wrongly only makes this grammar tighter)
	var check func(v any) (string, bool)
	for _, k := range o.keys {
		if k != kw && k != "type" && k != "enum" && k != "const" && !annotations[k] && knownKeyword(k) {
			var err error
			if check, err = g.valueChecker(without(without(o, "enum"), "const"), path); err != nil {
				return "", g.errf(path, kw, ErrUnsupported, "beside %s: %v", k, err)
			}
			break
		}
	}
	types, err := schemaTypes(o)
	if err != nil {
		return "", g.errf(path, "type", ErrSchema, "%v", err)
	}
	var other []any
	if c, ok := o.get("const"); ok && kw == "enum" {
		other = []any{c}
	}
	var alts []string
	seen := map[string]bool{}
	for _, v := range values {
		if !valueHasType(v, types) {
			continue
		}
		var b strings.Builder
		writeCompact(&b, v)
		lit := b.String()
		if check != nil {
			var ok bool
			if lit, ok = check(v); !ok {
				continue
			}
		}
		if len(other) > 0 {
			var c strings.Builder
			writeCompact(&c, other[0])
			if c.String() != lit {
				continue
			}
		}
		if !seen[lit] {
			seen[lit] = true
			alts = append(alts, gbnfLiteral(lit))
		}
	}
	if len(alts) == 0 {
		return "", &SchemaError{Path: path, Keyword: kw, Msg: "no value allowed", Err: ErrUnsupported, empty: true}
	}
	return g.rule(strings.Join(alts, " | "))
}

// valueChecker compiles rest (a schema of this document) to a grammar of
// its own and returns a test of a value against it: the value's compact
// serialization (keys in rest's properties order) and whether the
// grammar accepts it.
func (g *schemaGen) valueChecker(rest *jsonObject, path string) (func(v any) (string, bool), error) {
	g2 := &schemaGen{resolver: g.resolver, oldDraft: g.oldDraft, refRule: map[string]string{}, bodyRule: map[string]string{}}
	expr, err := g2.gen(rest, path, 0)
	if err != nil {
		return nil, err
	}
	gr, err := Compile("root ::= " + expr + "\n" + jsonBaseRules + strings.Join(g2.rules, "\n") + "\n")
	if err != nil {
		return nil, err
	}
	intersectVocabOnce.Do(func() { intersectVocab, _ = NewVocab([][]byte{{'a'}}, nil) })
	m := newMatcher(gr, intersectVocab)
	return func(v any) (string, bool) {
		var b strings.Builder
		writeCompact(&b, g.resolver.reorder(v, rest, 0))
		text := b.String()
		st := m.start
		for i := 0; i < len(text) && st != 0; i++ {
			var capped bool
			if st, capped = cappedStep(m, st, text[i]); capped {
				return "", false
			}
		}
		return text, st != 0 && m.accepting(st)
	}, nil
}

func valueHasType(v any, types []string) bool {
	for _, t := range types {
		switch t {
		case "null":
			if v == nil {
				return true
			}
		case "boolean":
			if _, ok := v.(bool); ok {
				return true
			}
		case "object":
			if _, ok := v.(*jsonObject); ok {
				return true
			}
		case "array":
			if _, ok := v.([]any); ok {
				return true
			}
		case "string":
			if _, ok := v.(string); ok {
				return true
			}
		case "number":
			if _, ok := v.(jsonNumber); ok {
				return true
			}
		case "integer":
			if n, ok := v.(jsonNumber); ok {
				if f, err := n.Float64(); err == nil && f == math.Trunc(f) {
					return true
				}
			}
		}
	}
	return false
}

func (g *schemaGen) typed(o *jsonObject, t, path string, depth int) (string, error) {
	// a format constrains strings alone; on other types it is vacuous,
	// or, where JSON Schema does not define it, a Warning
	if _, err := g.format(o, path); err != nil {
		return "", err
	}
	switch t {
	case "null":
		return `"null"`, nil
	case "boolean":
		return `("true" | "false")`, nil
	case "integer", "number":
		k, has, err := g.multipleOf(o, path)
		if err != nil {
			return "", err
		}
		if t == "integer" || has && k == 0 {
			return g.integer(o, path)
		}
		if has {
			if _, _, _, _, hasLo, hasHi, _ := g.bounds(o, path); hasLo || hasHi {
				return "", g.errf(path, "multipleOf", ErrUnsupported, "a fraction beside bounds")
			}
			return g.rule(`json-int ( "." [0-9]{1,` + strconv.Itoa(k) + `} )?`)
		}
		return g.number(o, path)
	case "string":
		return g.str(o, path)
	case "array":
		return g.array(o, path, depth)
	case "object":
		return g.obj(o, path, depth)
	}
	return "", g.errf(path, "type", ErrSchema, "unknown type %q", t)
}

func num(o *jsonObject, kw string) (float64, bool, error) {
	v, ok := o.get(kw)
	if !ok {
		return 0, false, nil
	}
	n, ok := v.(jsonNumber)
	if !ok {
		return 0, false, errorf("%s is not a number", kw)
	}
	f, err := n.Float64()
	return f, true, err
}

func (g *schemaGen) bounds(o *jsonObject, path string) (lo, hi float64, loEx, hiEx, hasLo, hasHi bool, err error) {
	lo, hasLo, err = num(o, "minimum")
	if err != nil {
		return
	}
	hi, hasHi, err = num(o, "maximum")
	if err != nil {
		return
	}
	for _, side := range []struct {
		kw    string
		v     *float64
		has   *bool
		ex    *bool
		lower bool
	}{{"exclusiveMinimum", &lo, &hasLo, &loEx, true}, {"exclusiveMaximum", &hi, &hasHi, &hiEx, false}} {
		v, ok := o.get(side.kw)
		if !ok {
			continue
		}
		switch v := v.(type) {
		case bool: // draft 4: a flag on minimum/maximum
			*side.ex = v && *side.has
		case jsonNumber:
			f, e := v.Float64()
			if e != nil {
				err = e
				return
			}
			if !*side.has || side.lower && f >= *side.v || !side.lower && f <= *side.v {
				*side.v, *side.has, *side.ex = f, true, true
			}
		default:
			err = errorf("%s is neither a number nor a boolean", side.kw)
			return
		}
	}
	return
}

func (g *schemaGen) integer(o *jsonObject, path string) (string, error) {
	lo, hi, loEx, hiEx, hasLo, hasHi, err := g.bounds(o, path)
	if err != nil {
		return "", g.errf(path, "minimum", ErrSchema, "%v", err)
	}
	if !hasLo && !hasHi {
		return "json-int", nil
	}
	var ilo, ihi int64
	const limit = 1e18
	if hasLo {
		if math.Abs(lo) > limit {
			return "", g.errf(path, "minimum", ErrUnsupported, "bound %g past ±1e18", lo)
		}
		c := math.Ceil(lo)
		if loEx && c == lo {
			c++
		}
		ilo = int64(c)
	}
	if hasHi {
		if math.Abs(hi) > limit {
			return "", g.errf(path, "maximum", ErrUnsupported, "bound %g past ±1e18", hi)
		}
		f := math.Floor(hi)
		if hiEx && f == hi {
			f--
		}
		ihi = int64(f)
	}
	if hasLo && hasHi && ilo > ihi {
		return "", g.errf(path, "minimum", ErrUnsupported, "no integer in range")
	}
	return g.rule(intRange(ilo, ihi, hasLo, hasHi))
}

func (g *schemaGen) number(o *jsonObject, path string) (string, error) {
	lo, _, loEx, _, hasLo, hasHi, err := g.bounds(o, path)
	if err != nil {
		return "", g.errf(path, "minimum", ErrSchema, "%v", err)
	}
	if !hasLo && !hasHi {
		return "json-number", nil
	}
	if hasLo && !hasHi && lo == 0 && !loEx {
		return "json-nonneg", nil
	}
	kw := "minimum"
	if !hasLo {
		kw = "maximum"
	}
	rlo, rhi, rloEx, rhiEx, err := ratBounds(o)
	if err != nil {
		return "", g.errf(path, kw, ErrSchema, "%v", err)
	}
	body, ok := decimalRange(rlo, rhi, rloEx, rhiEx, rlo != nil, rhi != nil)
	if !ok {
		return "", g.errf(path, kw, ErrUnsupported, "a bound past ±1e18 or with more than %d fraction digits", maxFracDigits)
	}
	if body == "" {
		return "", g.errf(path, kw, ErrUnsupported, "no number in range")
	}
	return g.rule(body)
}

// multipleOf reads a multipleOf of 10^-k (k ≥ 0: 1, 0.1, 0.01, …), which
// on a number is "at most k fraction digits" (written without an
// exponent; an integer when k is 0) and holds for every integer; any
// other value is refused naming it.
func (g *schemaGen) multipleOf(o *jsonObject, path string) (k int, has bool, err error) {
	v, ok := o.get("multipleOf")
	if !ok {
		return 0, false, nil
	}
	n, ok := v.(jsonNumber)
	r, okRat := new(big.Rat).SetString(string(n))
	if !ok || !okRat || r.Sign() <= 0 {
		return 0, false, g.errf(path, "multipleOf", ErrSchema, "not a positive number")
	}
	if r.Num().Cmp(big.NewInt(1)) == 0 {
		d := new(big.Int).Set(r.Denom())
		ten := big.NewInt(10)
		for ; k <= maxFracDigits; k++ {
			if d.Cmp(big.NewInt(1)) == 0 {
				return k, true, nil
			}
			if new(big.Int).Mod(d, ten).Sign() != 0 {
				break
			}
			d.Div(d, ten)
		}
	}
	return 0, false, g.errf(path, "multipleOf", ErrUnsupported, "%s is not 1 or a power of ten below it", string(n))
}

// ratBounds is bounds as exact rationals from the numbers' text (nil:
// none): the tighter of minimum and exclusiveMinimum (exclusive on a
// tie), the same for the maximum, and draft 4's boolean flags.
func ratBounds(o *jsonObject) (lo, hi *big.Rat, loEx, hiEx bool, err error) {
	for _, side := range []struct {
		kws   [2]string
		v     **big.Rat
		ex    *bool
		lower bool
	}{{[2]string{"minimum", "exclusiveMinimum"}, &lo, &loEx, true}, {[2]string{"maximum", "exclusiveMaximum"}, &hi, &hiEx, false}} {
		for i, kw := range side.kws {
			v, ok := o.get(kw)
			if !ok {
				continue
			}
			if b, isBool := v.(bool); isBool && i == 1 {
				*side.ex = b && *side.v != nil
				continue
			}
			n, isNum := v.(jsonNumber)
			if !isNum {
				return nil, nil, false, false, errorf("%s is not a number", kw)
			}
			r, ok := new(big.Rat).SetString(string(n))
			if !ok {
				return nil, nil, false, false, errorf("%s is not a number", kw)
			}
			if *side.v == nil || side.lower && r.Cmp(*side.v) >= 0 || !side.lower && r.Cmp(*side.v) <= 0 {
				*side.v, *side.ex = r, i == 1
			}
		}
	}
	return lo, hi, loEx, hiEx, nil
}

func (g *schemaGen) count(o *jsonObject, kw, path string) (int, bool, error) {
	f, ok, err := num(o, kw)
	if err != nil || !ok {
		if err != nil {
			return 0, false, g.errf(path, kw, ErrSchema, "%v", err)
		}
		return 0, false, nil
	}
	if f < 0 || f != math.Trunc(f) {
		return 0, false, g.errf(path, kw, ErrSchema, "not a non-negative integer")
	}
	if f > maxCount {
		return 0, false, g.errf(path, kw, ErrTooLarge, "%g is over %d", f, maxCount)
	}
	return int(f), true, nil
}

func (g *schemaGen) str(o *jsonObject, path string) (string, error) {
	minL, hasMin, err := g.count(o, "minLength", path)
	if err != nil {
		return "", err
	}
	maxL, hasMax, err := g.count(o, "maxLength", path)
	if err != nil {
		return "", err
	}
	if hasMin && hasMax && minL > maxL {
		return "", g.errf(path, "minLength", ErrUnsupported, "minLength above maxLength")
	}
	var cs []constraint
	f, err := g.format(o, path)
	if err != nil {
		return "", err
	}
	if f != "" {
		body, ok := formats[f]
		if !ok && !standardFormats[f] {
			// not a format JSON Schema defines: an annotation validators
			// ignore (a Warning)
			return g.str(without(o, "format"), path)
		}
		if !ok {
			return "", g.errf(path, "format", ErrUnsupported, "format %q", f)
		}
		cs = append(cs, constraint{"format", body})
	}
	if p, ok := o.get("pattern"); ok {
		ps, ok := p.(string)
		if !ok {
			return "", g.errf(path, "pattern", ErrSchema, "not a string")
		}
		e, err := regexToGBNF(ps)
		if err != nil {
			return "", g.errf(path, "pattern", ErrUnsupported, "%v", err)
		}
		cs = append(cs, constraint{"pattern", e})
	}
	if !hasMax {
		maxL = -1
	}
	switch {
	case len(cs) == 1 && !hasMin && !hasMax:
		if cs[0].keyword == "format" {
			if err := g.formatRules(); err != nil {
				return "", err
			}
		}
		return g.rule(`"\"" ` + cs[0].expr + ` "\""`)
	case len(cs) > 0:
		return g.intersect(path, cs, minL, maxL)
	}
	if !hasMin && !hasMax {
		return "json-string", nil
	}
	return g.rule(`"\"" ` + repeatExpr("json-char-ns", minL, maxL) + ` "\""`)
}

// formats are the string formats enforced exactly (or tighter).
var formats = map[string]string{
	"uri":       "fmt-uri",
	"hostname":  "fmt-hostname",
	"date":      "fmt-date",
	"time":      "fmt-time",
	"date-time": `fmt-date "T" fmt-time`,
	"uuid":      `fmt-hex{8} "-" fmt-hex{4} "-" fmt-hex{4} "-" fmt-hex{4} "-" fmt-hex{12}`,
	"email":     "fmt-email",
	"ipv4":      "fmt-ipv4",
	"ipv6":      "fmt-ipv6",
	"duration":  "fmt-duration",
}

// standardFormats are the formats JSON Schema (2020-12) defines; any
// other format name is an annotation.
var standardFormats = map[string]bool{
	"date-time": true, "date": true, "time": true, "duration": true, "email": true, "idn-email": true,
	"hostname": true, "idn-hostname": true, "ipv4": true, "ipv6": true, "uri": true, "uri-reference": true,
	"iri": true, "iri-reference": true, "uuid": true, "uri-template": true, "json-pointer": true,
	"relative-json-pointer": true, "regex": true,
}

// repeatExpr is x repeated lo to hi times (hi < 0: unbounded), nesting
// repetitions for counts past MaxRepetition.
func repeatExpr(x string, lo, hi int) string {
	var parts []string
	if lo > 0 {
		parts = append(parts, countExpr(x, lo))
	}
	switch {
	case hi < 0:
		parts = append(parts, x+"*")
	case hi > lo:
		n := hi - lo
		if n <= maxRepetition {
			parts = append(parts, x+"{0,"+strconv.Itoa(n)+"}")
		} else {
			// n = q·a + r: fewer than q whole blocks of a and a tail
			// under a, or q blocks and a tail of at most r; the blocks are
			// exact counts, so at most a few parses stay alive
			a := maxRepetition
			q, r := n/a, n%a
			blk := "( " + x + "{" + strconv.Itoa(a) + "} )"
			alt1 := blk + "{0," + strconv.Itoa(q-1) + "} " + x + "{0," + strconv.Itoa(a-1) + "}"
			alt2 := blk + "{" + strconv.Itoa(q) + "}"
			if r > 0 {
				alt2 += " " + x + "{0," + strconv.Itoa(r) + "}"
			}
			parts = append(parts, "( "+alt1+" | "+alt2+" )")
		}
	}
	if len(parts) == 0 {
		return `""`
	}
	return strings.Join(parts, " ")
}

// countExpr is x exactly n times.
func countExpr(x string, n int) string {
	if n <= maxRepetition {
		return x + "{" + strconv.Itoa(n) + "}"
	}
	q, r := n/maxRepetition, n%maxRepetition
	out := "( " + x + "{" + strconv.Itoa(maxRepetition) + "} ){" + strconv.Itoa(q) + "}"
	if r > 0 {
		out += " " + x + "{" + strconv.Itoa(r) + "}"
	}
	return out
}

const formatRules = `fmt-hex ::= [0-9a-fA-F]
fmt-d ::= [0-9]
fmt-leap-yy ::= "0" [48] | [2468] [048] | [13579] [26]
fmt-leap ::= fmt-d fmt-d fmt-leap-yy | fmt-leap-yy "00" | "0000"
fmt-date ::= fmt-d{4} "-" ( ( "01" | "03" | "05" | "07" | "08" | "10" | "12" ) "-" fmt-day31 | ( "04" | "06" | "09" | "11" ) "-" fmt-day30 | "02-" fmt-day28 ) | fmt-leap "-02-29"
fmt-day28 ::= "0" [1-9] | "1" fmt-d | "2" [0-8]
fmt-day30 ::= "0" [1-9] | [12] fmt-d | "30"
fmt-day31 ::= "0" [1-9] | [12] fmt-d | "3" [01]
fmt-time ::= ( [01] fmt-d | "2" [0-3] ) ":" [0-5] fmt-d ":" [0-5] fmt-d ( "." fmt-d+ )? ( "Z" | [+-] ( [01] fmt-d | "2" [0-3] ) ":" [0-5] fmt-d )
fmt-atom ::= [a-zA-Z0-9!#$%&'*+/=?^_{|}~\x60-]{1,16}
fmt-label ::= [a-zA-Z0-9] ( [a-zA-Z0-9-]{0,38} [a-zA-Z0-9] )?
fmt-email ::= fmt-atom ( "." fmt-atom ){0,3} "@" fmt-label ( "." fmt-label ){1,3}
fmt-label63 ::= [a-zA-Z0-9] ( [a-zA-Z0-9-]{0,61} [a-zA-Z0-9] )?
fmt-hostname ::= fmt-label63 ( "." fmt-label63 ){0,3}
fmt-pchar ::= [a-zA-Z0-9._~!$&'()*+,;=:@-] | "%" fmt-hex fmt-hex
fmt-uri ::= [a-zA-Z] [a-zA-Z0-9+.-]{0,15} "://" fmt-hostname ( ":" fmt-d{1,5} )? ( "/" fmt-pchar* )* ( "?" ( fmt-pchar | [/?] )* )? ( "#" ( fmt-pchar | [/?] )* )?
fmt-octet ::= fmt-d | [1-9] fmt-d | "1" fmt-d fmt-d | "2" [0-4] fmt-d | "25" [0-5]
fmt-ipv4 ::= fmt-octet "." fmt-octet "." fmt-octet "." fmt-octet
fmt-h16 ::= fmt-hex{1,4}
fmt-h16c ::= fmt-h16 ":"
fmt-ls32 ::= fmt-h16 ":" fmt-h16 | fmt-ipv4
fmt-ipv6 ::= fmt-h16c{6} fmt-ls32 | "::" fmt-h16c{5} fmt-ls32 | fmt-h16? "::" fmt-h16c{4} fmt-ls32 | ( fmt-h16c{0,1} fmt-h16 )? "::" fmt-h16c{3} fmt-ls32 | ( fmt-h16c{0,2} fmt-h16 )? "::" fmt-h16c{2} fmt-ls32 | ( fmt-h16c{0,3} fmt-h16 )? "::" fmt-h16c fmt-ls32 | ( fmt-h16c{0,4} fmt-h16 )? "::" fmt-ls32 | ( fmt-h16c{0,5} fmt-h16 )? "::" fmt-h16 | ( fmt-h16c{0,6} fmt-h16 )? "::"
fmt-dur-s ::= fmt-d+ "S"
fmt-dur-m ::= fmt-d+ "M" fmt-dur-s?
fmt-dur-h ::= fmt-d+ "H" fmt-dur-m?
fmt-dur-time ::= "T" ( fmt-dur-h | fmt-dur-m | fmt-dur-s )
fmt-dur-day ::= fmt-d+ "D"
fmt-dur-month ::= fmt-d+ "M" fmt-dur-day?
fmt-dur-year ::= fmt-d+ "Y" fmt-dur-month?
fmt-duration ::= "P" ( ( fmt-dur-day | fmt-dur-month | fmt-dur-year ) fmt-dur-time? | fmt-dur-time | fmt-d+ "W" )
`

func (g *schemaGen) formatRules() error {
	if g.bodyRule["\x00formats"] != "" {
		return nil
	}
	g.bodyRule["\x00formats"] = "done"
	g.rules = append(g.rules, strings.TrimSuffix(formatRules, "\n"))
	return nil
}

func (g *schemaGen) array(o *jsonObject, path string, depth int) (string, error) {
	minI, _, err := g.count(o, "minItems", path)
	if err != nil {
		return "", err
	}
	maxI, hasMax, err := g.count(o, "maxItems", path)
	if err != nil {
		return "", err
	}
	var prefix []any
	var rest any = true
	if p, ok := o.get("prefixItems"); ok {
		if prefix, ok = p.([]any); !ok {
			return "", g.errf(path, "prefixItems", ErrSchema, "not an array")
		}
		if it, ok := o.get("items"); ok {
			rest = it
		}
	} else if it, ok := o.get("items"); ok {
		if arr, isArr := it.([]any); isArr {
			prefix = arr
			if ai, ok := o.get("additionalItems"); ok {
				rest = ai
			}
		} else {
			rest = it
		}
	}
	if _, ok := o.get("additionalItems"); ok {
		if it, _ := o.get("items"); it == nil {
			// additionalItems without array items has no effect
		}
	}
	if rest == false {
		if !hasMax || maxI > len(prefix) {
			maxI, hasMax = len(prefix), true
		}
	}
	if hasMax && minI > maxI {
		return "", g.errf(path, "minItems", ErrUnsupported, "minItems above maxItems")
	}
	elems := make([]string, len(prefix))
	for i, p := range prefix {
		if hasMax && i >= maxI {
			break
		}
		e, err := g.gen(p, sprintf("%s/prefixItems/%d", path, i), depth+1)
		if err != nil {
			return "", err
		}
		elems[i] = e
	}
	var item string
	if rest != false && (!hasMax || maxI > len(prefix)) {
		if item, err = g.gen(rest, path+"/items", depth+1); err != nil {
			return "", err
		}
	}
	// tail(i): the elements from index i on, each after a comma.
	var tail func(i int) (string, error)
	tail = func(i int) (string, error) {
		if i >= len(prefix) {
			if item == "" || hasMax && i >= maxI {
				return `""`, nil
			}
			lo, hi := max(minI-i, 0), -1
			if hasMax {
				hi = maxI - i
			}
			return repeatExpr(`( "," `+item+` )`, lo, hi), nil
		}
		if hasMax && i >= maxI {
			return `""`, nil
		}
		next, err := tail(i + 1)
		if err != nil {
			return "", err
		}
		r, err := g.rule(`"," ` + elems[i] + " " + next)
		if err != nil {
			return "", err
		}
		if i < minI {
			return r, nil
		}
		return r + "?", nil
	}
	if hasMax && maxI == 0 {
		return `"[]"`, nil
	}
	var first, next string
	if len(prefix) > 0 {
		first = elems[0]
	} else {
		first = item
	}
	if first == "" {
		return `"[]"`, nil
	}
	if next, err = tail(1); err != nil {
		return "", err
	}
	body := first + " " + next
	if minI == 0 {
		return g.rule(`"[" ( ` + body + ` )? "]"`)
	}
	return g.rule(`"[" ` + body + ` "]"`)
}

func (g *schemaGen) obj(o *jsonObject, path string, depth int) (string, error) {
	type prop struct {
		name   string
		schema any
		req    bool
	}
	var props []prop
	if p, ok := o.get("properties"); ok {
		po, ok := p.(*jsonObject)
		if !ok {
			return "", g.errf(path, "properties", ErrSchema, "not an object")
		}
		for i, k := range po.keys {
			props = append(props, prop{name: k, schema: po.vals[i]})
		}
	}
	var additional any = true
	if a, ok := o.get("additionalProperties"); ok {
		additional = a
	}
	if r, ok := o.get("required"); ok {
		list, ok := r.([]any)
		if !ok {
			return "", g.errf(path, "required", ErrSchema, "not an array")
		}
		// By name, not a scan of the properties per required name: that
		// was quadratic, minutes for a body of 8 MiB before any cap.
		byName := make(map[string][]int, len(props))
		for i, p := range props {
			byName[p.name] = append(byName[p.name], i)
		}
		for _, e := range list {
			name, ok := e.(string)
			if !ok {
				return "", g.errf(path, "required", ErrSchema, "holds a non-string")
			}
			found := len(byName[name]) > 0
			for _, i := range byName[name] {
				props[i].req = true
			}
			if !found {
				// a required key the properties do not name takes the
				// additionalProperties schema: a property of its own,
				// after the named ones (where SerializeInstance puts it)
				pp, _ := o.get("patternProperties")
				if po, ok := pp.(*jsonObject); ok && len(po.keys) > 0 || additional == false {
					return "", g.errf(path, "required", ErrUnsupported, "%q is not among the properties", name)
				}
				byName[name] = []int{len(props)}
				props = append(props, prop{name: name, schema: additional, req: true})
			}
		}
	}
	nreq := 0
	for _, p := range props {
		if p.req {
			nreq++
		}
	}
	minP, _, err := g.count(o, "minProperties", path)
	if err != nil {
		return "", err
	}
	maxP, hasMaxP, err := g.count(o, "maxProperties", path)
	if err != nil {
		return "", err
	}
	if hasMaxP && (maxP < nreq || maxP < minP) {
		return "", g.errf(path, "maxProperties", ErrUnsupported, "fewer than the required properties or minProperties")
	}
	nopt := 0
	for _, p := range props {
		if !p.req && p.schema != false {
			nopt++
		}
	}
	// propertyNames of string keywords: the extra keys are its strings,
	// and a named property it refuses cannot appear (exact where it
	// allows none of the named ones, so extras never spell one)
	keyRule := ""
	if pn, ok := o.get("propertyNames"); ok {
		pno, ok := pn.(*jsonObject)
		if !ok {
			return "", g.errf(path, "propertyNames", ErrUnsupported, "enforced only as a schema of string keywords")
		}
		for _, k := range pno.keys {
			if knownKeyword(k) && !annotations[k] && !slices.Contains([]string{"type", "pattern", "minLength", "maxLength", "format"}, k) {
				return "", g.errf(path, "propertyNames", ErrUnsupported, "enforced only with type, pattern, minLength, maxLength and format, not %s", k)
			}
		}
		if t, has := pno.get("type"); has && t != "string" {
			return "", g.errf(path, "propertyNames", ErrUnsupported, "enforced only for type string")
		}
		if pp, _ := o.get("patternProperties"); pp != nil {
			if po, ok := pp.(*jsonObject); ok && len(po.keys) > 0 {
				return "", g.errf(path, "propertyNames", ErrUnsupported, "beside patternProperties")
			}
		}
		check, err := g.valueChecker(pno, path+"/propertyNames")
		if err != nil {
			return "", g.errf(path, "propertyNames", ErrUnsupported, "%v", err)
		}
		for i, p := range props {
			if _, ok := check(p.name); ok {
				if additional != false {
					return "", g.errf(path, "propertyNames", ErrUnsupported, "allows property %q, which an extra key could then spell", p.name)
				}
				continue
			}
			if p.req {
				return "", g.errf(path, "propertyNames", ErrUnsupported, "refuses required property %q", p.name)
			}
			props[i].schema = false
		}
		if keyRule, err = g.str(pno, path+"/propertyNames"); err != nil {
			return "", err
		}
	}
	var kvs []string
	var names []string
	for _, p := range props {
		names = append(names, p.name)
		if p.schema == false {
			if p.req {
				return "", g.errf(path, "required", ErrUnsupported, "%q is required but its schema is false", p.name)
			}
			kvs = append(kvs, "")
			continue
		}
		v, err := g.gen(p.schema, path+"/properties/"+p.name, depth+1)
		if err != nil {
			return "", err
		}
		var key strings.Builder
		writeString(&key, p.name)
		kvs = append(kvs, gbnfLiteral(key.String()+":")+" "+v)
	}
	extra := ""
	if v, ok := o.get("patternProperties"); ok && additional == false {
		var err error
		if extra, err = g.patternKeys(v.(*jsonObject), names, path, depth); err != nil {
			return "", err
		}
	}
	if additional != false {
		val, err := g.gen(additional, path+"/additionalProperties", depth+1)
		if err != nil {
			return "", err
		}
		key, err := g.keyNotIn(names, path)
		if err != nil {
			return "", err
		}
		if keyRule != "" {
			key = keyRule
		}
		if extra, err = g.rule(key + ` ":" ` + val); err != nil {
			return "", err
		}
	}
	// the count of extra properties, lo to hi (hi < 0: any): exact where
	// every named property is required, so the count is nreq + extras.
	// Past the required ones, minProperties asks for one extra at most (a
	// key written twice is one property: two extras may be one).
	lo, hi := 0, -1
	if minP > nreq {
		if minP > nreq+1 || nopt > 0 || extra == "" {
			return "", g.errf(path, "minProperties", ErrUnsupported, "more than the required properties and one more")
		}
		lo = 1
	}
	if hasMaxP && (extra != "" || maxP < nreq+nopt) {
		if nopt > 0 {
			return "", g.errf(path, "maxProperties", ErrUnsupported, "beside optional properties")
		}
		hi = maxP - nreq
	}
	// after(i): properties i… when something came before (comma first);
	// start(i): the same when nothing did.
	afterExtra, startExtra := `""`, `""`
	if extra != "" && hi != 0 {
		afterExtra = repeatExpr(`( "," `+extra+` )`, lo, hi)
		rest := -1
		if hi > 0 {
			rest = hi - 1
		}
		startExtra = extra + " " + repeatExpr(`( "," `+extra+` )`, max(lo-1, 0), rest)
		if lo == 0 {
			startExtra = `( ` + startExtra + ` )?`
		}
	}
	after := make([]string, len(props)+1)
	start := make([]string, len(props)+1)
	after[len(props)], start[len(props)] = afterExtra, startExtra
	for i := len(props) - 1; i >= 0; i-- {
		if kvs[i] == "" {
			after[i], start[i] = after[i+1], start[i+1]
			continue
		}
		a := `"," ` + kvs[i] + " " + after[i+1]
		s := kvs[i] + " " + after[i+1]
		if !props[i].req {
			a += " | " + after[i+1]
			s += " | " + start[i+1]
		}
		var err error
		if after[i], err = g.rule(a); err != nil {
			return "", err
		}
		if start[i], err = g.rule(s); err != nil {
			return "", err
		}
	}
	return g.rule(`"{" ` + start[0] + ` "}"`)
}

// keyNotIn is a JSON string that is none of names: raw characters until
// it leaves every name, then any (escapes could spell a name before).
func (g *schemaGen) keyNotIn(names []string, path string) (string, error) {
	if len(names) == 0 {
		return "json-string", nil
	}
	type tnode struct {
		end      bool
		children map[rune]*tnode
		order    []rune
	}
	root := &tnode{children: map[rune]*tnode{}}
	for _, n := range names {
		cur := root
		for _, c := range n {
			if _, esc := jsonEscape(c); esc {
				return "", g.errf(path, "properties", ErrUnsupported, "property name %q needs escapes", n)
			}
			next, ok := cur.children[c]
			if !ok {
				next = &tnode{children: map[rune]*tnode{}}
				cur.children[c] = next
				cur.order = append(cur.order, c)
			}
			cur = next
		}
		cur.end = true
	}
	free, err := g.rule(`json-char* "\""`)
	if err != nil {
		return "", err
	}
	_, freeOther := splitASCII(normalize([]runeRange{{0, 0x1F}, {'"', '"'}, {'\\', '\\'}}, true))
	freeU, err := g.rule(classExpr(freeOther) + " " + free)
	if err != nil {
		return "", err
	}
	var build func(n *tnode) (string, error)
	build = func(n *tnode) (string, error) {
		var alts []string
		if !n.end {
			alts = append(alts, `"\""`)
		}
		slices.Sort(n.order)
		var excl []runeRange
		for _, c := range n.order {
			sub, err := build(n.children[c])
			if err != nil {
				return "", err
			}
			alts = append(alts, gbnfLiteral(string(c))+" "+sub)
			excl = append(excl, runeRange{c, c})
		}
		excl = append(excl, runeRange{0, 0x1F}, runeRange{'"', '"'}, runeRange{'\\', '\\'})
		rest := normalize(excl, true)
		// once a raw character leaves every name, the rest is free: one
		// rule for every node (so the matcher meets one state there), and
		// one for a first non-ASCII character when no name has one here
		ascii, other := splitASCII(rest)
		if slices.Equal(other, freeOther) {
			if len(ascii) > 0 {
				alts = append(alts, classExpr(ascii)+" "+free)
			}
			alts = append(alts, freeU)
		} else if len(rest) > 0 {
			alts = append(alts, classExpr(rest)+" "+free)
		}
		return g.rule(strings.Join(alts, " | "))
	}
	body, err := build(root)
	if err != nil {
		return "", err
	}
	return `"\"" ` + body, nil
}

// splitASCII splits sorted ranges at 0x80.
func splitASCII(rs []runeRange) (ascii, other []runeRange) {
	for _, r := range rs {
		if r.lo < 0x80 {
			ascii = append(ascii, runeRange{r.lo, min(r.hi, 0x7F)})
		}
		if r.hi >= 0x80 {
			other = append(other, runeRange{max(r.lo, 0x80), r.hi})
		}
	}
	return ascii, other
}

// disjoint checks that no value can match two oneOf branches: their
// types differ, or they hold different constants or enums, or objects
// require a property whose constants differ.
func (g *schemaGen) disjoint(branches []*jsonObject, path string) error {
	for i := range branches {
		for j := i + 1; j < len(branches); j++ {
			if !g.disjointPair(branches[i], branches[j], 0) {
				return g.errf(path, "oneOf", ErrUnsupported, "branches %d and %d may both match (enforced only when provably exclusive)", i, j)
			}
		}
	}
	return nil
}

func (g *schemaGen) deref(o *jsonObject, depth int) *jsonObject {
	for depth < 16 {
		ref, ok := o.get("$ref")
		if !ok {
			return o
		}
		s, _ := ref.(string)
		t, err := g.resolve(s)
		to, ok := t.(*jsonObject)
		if err != nil || !ok {
			return o
		}
		o = to
		depth++
	}
	return o
}

func (g *schemaGen) disjointPair(a, b *jsonObject, depth int) bool {
	a, b = g.deref(a, 0), g.deref(b, 0)
	ta, erra := effectiveTypes(a)
	tb, errb := effectiveTypes(b)
	if erra == nil && errb == nil {
		overlap := false
		for _, x := range ta {
			for _, y := range tb {
				if x == y || x == "number" && y == "integer" || x == "integer" && y == "number" {
					overlap = true
				}
			}
		}
		if !overlap {
			return true
		}
	}
	va, oka := constValues(a)
	vb, okb := constValues(b)
	if oka && okb {
		for _, x := range va {
			if slices.Contains(vb, x) {
				return false
			}
		}
		return true
	}
	if depth > 2 {
		return false
	}
	onlyObject := func(o *jsonObject, t []string, err error) bool {
		return err == nil && len(t) == 1 && t[0] == "object"
	}
	if onlyObject(a, ta, erra) && onlyObject(b, tb, errb) && (closedAgainst(a, b) || closedAgainst(b, a)) {
		return true
	}
	pa, _ := a.get("properties")
	pb, _ := b.get("properties")
	poa, _ := pa.(*jsonObject)
	pob, _ := pb.(*jsonObject)
	if poa == nil || pob == nil || !slices.Contains(typesOf(ta), "object") && erra == nil {
		return false
	}
	for i, k := range poa.keys {
		sb, ok := pob.get(k)
		if !ok || !requires(a, k) || !requires(b, k) {
			continue
		}
		sa, _ := poa.vals[i].(*jsonObject)
		sbo, _ := sb.(*jsonObject)
		if sa != nil && sbo != nil && g.disjointPair(sa, sbo, depth+1) {
			// both objects need key k with values no value satisfies twice;
			// and a non-object value matches neither object-only branch
			onlyObj := func(o *jsonObject) bool {
				t, err := effectiveTypes(o)
				return err == nil && len(t) == 1 && t[0] == "object"
			}
			if onlyObj(a) && onlyObj(b) {
				return true
			}
		}
	}
	return false
}

// objectKeywords assert only about objects: any other value passes them.
var objectKeywords = map[string]bool{"properties": true, "required": true, "additionalProperties": true,
	"patternProperties": true, "minProperties": true, "maxProperties": true, "propertyNames": true,
	"dependencies": true, "dependentRequired": true, "dependentSchemas": true, "unevaluatedProperties": true}

// objectKeywordsOnly reports whether every non-object satisfies o: its
// assertions are all object keywords.
func objectKeywordsOnly(o *jsonObject) bool {
	for _, k := range o.keys {
		if knownKeyword(k) && !annotations[k] && !objectKeywords[k] {
			return false
		}
	}
	return true
}

// closedAgainst reports whether no object satisfies both a and b because
// a is closed (additionalProperties false, no patternProperties) and b
// requires a key a does not name, or names with the false schema.
func closedAgainst(a, b *jsonObject) bool {
	if ap, _ := a.get("additionalProperties"); ap != false {
		return false
	}
	if pp, ok := a.get("patternProperties"); ok {
		if po, ok := pp.(*jsonObject); !ok || len(po.keys) > 0 {
			return false
		}
	}
	pa, _ := a.get("properties")
	poa, _ := pa.(*jsonObject)
	r, _ := b.get("required")
	list, _ := r.([]any)
	for _, k := range list {
		name, _ := k.(string)
		if poa == nil {
			return true
		}
		if v, ok := poa.get(name); !ok || v == false {
			return true
		}
	}
	return false
}

func typesOf(t []string) []string { return t }

func requires(o *jsonObject, k string) bool {
	r, _ := o.get("required")
	list, _ := r.([]any)
	return slices.Contains(list, any(k))
}

// effectiveTypes is the types a branch allows, from type, or from const
// or enum values; an error when unconstrained.
func effectiveTypes(o *jsonObject) ([]string, error) {
	if _, ok := o.get("type"); ok {
		return schemaTypes(o)
	}
	if vals, ok := constValues(o); ok {
		_ = vals
		var ts []string
		v, _ := o.get("enum")
		list, _ := v.([]any)
		if c, ok := o.get("const"); ok {
			list = []any{c}
		}
		for _, e := range list {
			for _, t := range []string{"null", "boolean", "object", "array", "string", "number"} {
				if valueHasType(e, []string{t}) && !slices.Contains(ts, t) {
					ts = append(ts, t)
				}
			}
		}
		return ts, nil
	}
	return nil, errors.New("unconstrained")
}

func constValues(o *jsonObject) ([]string, bool) {
	var list []any
	if c, ok := o.get("const"); ok {
		list = []any{c}
	} else if e, ok := o.get("enum"); ok {
		l, ok := e.([]any)
		if !ok {
			return nil, false
		}
		list = l
	} else {
		return nil, false
	}
	out := make([]string, len(list))
	for i, v := range list {
		var b strings.Builder
		writeCompact(&b, v)
		out[i] = b.String()
	}
	return out, true
}
