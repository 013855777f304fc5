package toolcall

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
)

// Call is one parsed tool call.
type Call struct {
	// ID is the call's id: Parse leaves it empty (the server assigns one);
	// Stream gives the id it streamed.
	ID   string
	Name string
	// Arguments is the arguments object's JSON text as the model wrote it
	// (or the JSON a string argument held).
	Arguments string
}

// Message is a turn's text read as an assistant message.
type Message struct {
	// Content is the text outside the calls, the space next to each call
	// trimmed; with no calls it is the whole text, unchanged.
	Content string
	Calls   []Call
}

// Parse reads a whole turn's text as family f writes it. It never fails:
// what does not parse as a call (a block whose JSON is broken, a name
// that is no string) stays in Content as it was written. A call cut short
// (the text ends inside it, as at max_tokens) is dropped when the turn
// holds complete calls before it, else it is Content.
func Parse(f Family, text string) Message {
	o := build(scan(f, text, true), true, false)
	m := Message{Content: o.content}
	for _, c := range o.calls {
		m.Calls = append(m.Calls, Call{Name: c.name, Arguments: c.args})
	}
	return m
}

// item is a stretch of the text: content, or a call whose raw text is
// content again if it proves not to be one. A cut item is a call the text
// ends inside (final scans only).
type item struct {
	content string
	call    *callScan
	raw     string
	cut     bool
}

// scanned is a text split into items; in a partial scan held is a tail
// that may start a marker and open the call still being written.
type scanned struct {
	items []item
	held  bool
	open  *callScan
}

func (s *scanned) text(t string) {
	if t != "" {
		s.items = append(s.items, item{content: t})
	}
}

func (s *scanned) call(c callScan, raw string) { s.items = append(s.items, item{call: &c, raw: raw}) }

// cutCall adds a call the text ends inside: raw is its text.
func (s *scanned) cutCall(c callScan, raw string) {
	c.done = false
	s.items = append(s.items, item{call: &c, raw: raw, cut: true})
}

// tail adds rest as content, less (in a partial scan) a suffix that may
// begin one of marks.
func (s *scanned) tail(rest string, final bool, marks ...string) {
	if !final {
		if h := heldPrefix(rest, marks...); h > 0 {
			rest, s.held = rest[:len(rest)-h], true
		}
	}
	s.text(rest)
}

func scan(f Family, text string, final bool) scanned {
	switch f {
	case Hermes:
		return scanHermes(text, final)
	case Llama3:
		return scanLlama3(text, final)
	case Mistral:
		return scanMistral(text, final)
	case MistralArgs:
		return scanMistralArgs(text, final)
	}
	return scanGeneric(text, final)
}

// partialCall is a call as far as it goes: name known, args the
// arguments' text so far (whole when done).
type partialCall struct {
	name, args string
	done       bool
}

type built struct {
	content string
	calls   []partialCall
}

// build resolves the items: valid calls are calls, the rest content, the
// space next to each call trimmed (and, in a partial build, the content's
// trailing space held back until what follows it is known). A cut call is
// dropped when there are calls or dropCut (a stream that began it), else
// it is content.
func build(s scanned, final, dropCut bool) built {
	var out built
	isCall := make([]bool, len(s.items))
	for i, it := range s.items {
		isCall[i] = it.call != nil && it.call.valid()
		dropCut = dropCut || isCall[i]
	}
	drop := make([]bool, len(s.items))
	for i, it := range s.items {
		drop[i] = isCall[i] || it.cut && dropCut
	}
	var b strings.Builder
	for i, it := range s.items {
		if isCall[i] {
			out.calls = append(out.calls, partialCall{name: it.call.name, args: it.call.args, done: true})
			continue
		}
		if drop[i] {
			continue
		}
		t := it.content
		if it.call != nil {
			t = it.raw
		}
		if i > 0 && drop[i-1] {
			t = strings.TrimLeft(t, " \t\r\n")
		}
		if i+1 < len(s.items) && drop[i+1] || !final && i == len(s.items)-1 {
			t = strings.TrimRight(t, " \t\r\n")
		}
		b.WriteString(t)
	}
	out.content = b.String()
	if o := s.open; !final && o != nil && o.hasName && !o.bad && nameRE.MatchString(o.name) {
		pc := partialCall{name: o.name}
		if strings.HasPrefix(o.args, "{") && !o.argsStr {
			pc.args = o.args
		}
		out.calls = append(out.calls, pc)
	}
	return out
}

// scanHermes: <tool_call> JSON </tool_call> blocks anywhere; a last block
// may lack its closing tag.
func scanHermes(text string, final bool) scanned {
	const open, closing = hermesOpen, hermesClose
	keys := Hermes.argKeys()
	var sc scanned
	for i := 0; ; {
		j := strings.Index(text[i:], open)
		if j < 0 {
			sc.tail(text[i:], final, open)
			return sc
		}
		sc.text(text[i : i+j])
		start := i + j
		body := start + len(open)
		k := strings.Index(text[body:], closing)
		if k < 0 {
			c := scanCall(text, skipSpace(text, body), keys)
			if !final {
				sc.open = &c
				return sc
			}
			switch {
			case !c.done && !c.bad:
				sc.cutCall(c, text[start:])
			case !c.done || !onlySpace(text[c.end:]):
				c.bad = true
				sc.call(c, text[start:])
			default:
				sc.call(c, text[start:])
			}
			return sc
		}
		inner := text[:body+k]
		c := scanCall(inner, skipSpace(inner, body), keys)
		if !c.done || !onlySpace(inner[c.end:]) {
			c.bad = true
		}
		i = body + k + len(closing)
		sc.call(c, text[start:i])
	}
}

// arrayScan is a JSON array of call objects read so far.
type arrayScan struct {
	elems  []callScan // the complete elements
	open   *callScan  // the element the text ends inside
	closed bool       // the array's "]" was read
	bad    bool       // not an array of call objects
	end    int        // index after the "]", or where the text ran out
}

// valid reports whether every complete element is a call.
func (a *arrayScan) valid() bool {
	for _, e := range a.elems {
		if !e.valid() {
			return false
		}
	}
	return !a.bad
}

// scanCallArray reads call objects separated by commas from s[p:], just
// after an array's "[", up to its "]".
func scanCallArray(s string, p int, keys []string) arrayScan {
	var a arrayScan
	for !a.closed && !a.bad && a.open == nil {
		p = skipSpace(s, p)
		if p >= len(s) {
			break
		}
		c := scanCall(s, p, keys)
		switch {
		case c.bad:
			a.bad = true
		case !c.done:
			a.open = &c
		default:
			a.elems = append(a.elems, c)
			p = skipSpace(s, c.end)
			switch {
			case p >= len(s):
			case s[p] == ',':
				p++
			case s[p] == ']':
				p++
				a.closed = true
			default:
				a.bad = true
			}
		}
	}
	a.end = p
	return a
}

// arrayItems adds an array of calls that the text ends inside (start is
// where its envelope began): in a partial scan its calls so far and the
// open one; in a final one its complete calls and the cut rest. It
// reports false (adding nothing) when some element is not a call.
func (sc *scanned) arrayItems(a arrayScan, text string, start int, final bool) bool {
	if !a.valid() {
		return false
	}
	for _, e := range a.elems {
		sc.call(e, "")
	}
	if !final {
		sc.open = a.open
		if sc.open == nil {
			sc.open = &callScan{}
		}
		return true
	}
	c := callScan{}
	if a.open != nil {
		c = *a.open
	}
	raw := text[a.end:]
	if len(a.elems) == 0 {
		raw = text[start:]
	}
	sc.cutCall(c, raw)
	return true
}

// scanMistral: [TOOL_CALLS] followed by a JSON array of call objects.
func scanMistral(text string, final bool) scanned {
	const marker = toolCalls
	keys := Mistral.argKeys()
	var sc scanned
	for i := 0; ; {
		j := strings.Index(text[i:], marker)
		if j < 0 {
			sc.tail(text[i:], final, marker)
			return sc
		}
		sc.text(text[i : i+j])
		start := i + j
		p := skipSpace(text, start+len(marker))
		if p < len(text) && text[p] != '[' {
			sc.text(text[start:p]) // a marker without its array: text
			i = p
			continue
		}
		a := scanCallArray(text, min(p+1, len(text)), keys)
		switch {
		case a.closed && a.valid():
			for _, e := range a.elems {
				sc.call(e, "")
			}
			i = a.end
			continue
		case a.closed:
			sc.text(text[start:a.end])
			i = a.end
			continue
		case !a.bad && sc.arrayItems(a, text, start, final):
			return sc
		}
		sc.text(text[start:])
		return sc
	}
}

// scanMistralArgs: [TOOL_CALLS]name[ARGS]{...} (a [CALL_ID]id may come
// before [ARGS]), repeated.
func scanMistralArgs(text string, final bool) scanned {
	const marker, idTag = toolCalls, callIDTag
	var sc scanned
	for i := 0; ; {
		j := strings.Index(text[i:], marker)
		if j < 0 {
			sc.tail(text[i:], final, marker)
			return sc
		}
		sc.text(text[i : i+j])
		start := i + j
		p := start + len(marker)
		a := strings.Index(text[p:], argsTag)
		if a < 0 {
			if final {
				sc.cutCall(callScan{}, text[start:])
			} else {
				sc.open = &callScan{}
			}
			return sc
		}
		name := text[p : p+a]
		if k := strings.Index(name, idTag); k >= 0 {
			name = name[:k]
		}
		c := callScan{name: strings.TrimSpace(name), hasName: true}
		if !nameRE.MatchString(c.name) {
			c.bad = true
		}
		q := skipSpace(text, p+a+len(argsTag))
		end, complete, bad := scanValue(text, q)
		switch {
		case complete:
			c.args, c.argsDone, c.done, c.end = text[q:end], true, true, end
			sc.call(c, text[start:end])
			i = end
			continue
		case !bad:
			if q < len(text) && text[q] == '{' {
				c.args = text[q:]
			}
			if final {
				sc.cutCall(c, text[start:])
			} else {
				sc.open = &c
			}
			return sc
		}
		sc.text(text[start:])
		return sc
	}
}

// scanLlama3: one call, {"name": ..., "parameters": ...} at the start or
// wherever {"name" first appears, or after <|python_tag|> (JSON, or a
// built-in tool's name.call(k="v", ...)); what follows the call is content.
func scanLlama3(text string, final bool) scanned {
	const tag, jsonMark = pythonTag, `{"name"`
	keys := Llama3.argKeys()
	var sc scanned
	pos, isTag := -1, false
	if s := skipSpace(text, 0); s < len(text) && text[s] == '{' {
		pos = s
	} else if n := strings.Index(text, jsonMark); n >= 0 {
		pos = n
	}
	if t := strings.Index(text, tag); t >= 0 && (pos < 0 || t < pos) {
		pos, isTag = t, true
	}
	if pos < 0 {
		if !final && onlySpace(text) {
			sc.held = true
			return sc
		}
		sc.tail(text, final, tag, jsonMark)
		return sc
	}
	sc.text(text[:pos])
	p := pos
	if isTag {
		p = skipSpace(text, pos+len(tag))
		if p < len(text) && text[p] != '{' {
			if !final {
				sc.open = &callScan{}
				return sc
			}
			if c, ok := builtinCall(text[p:]); ok {
				sc.call(c, text[pos:])
			} else {
				sc.text(text[pos:])
			}
			return sc
		}
	}
	c := scanCall(text, p, keys)
	switch {
	case c.done:
		sc.call(c, text[pos:c.end])
		sc.text(text[c.end:])
	case !final && !c.bad:
		sc.open = &c
	case !c.bad:
		sc.cutCall(c, text[pos:])
	default:
		sc.text(text[pos:])
	}
	return sc
}

var (
	builtinRE = regexp.MustCompile(`(?s)^([a-zA-Z0-9_]+)\.call\((.*)\)\s*$`)
	kwargRE   = regexp.MustCompile(`^\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|[^,]*)\s*(?:,|$)`)
)

// builtinCall reads Llama 3's built-in tool call name.call(k="v", ...)
// into a call with the keyword arguments as a JSON object.
func builtinCall(s string) (callScan, bool) {
	m := builtinRE.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return callScan{}, false
	}
	var b strings.Builder
	b.WriteByte('{')
	rest := m[2]
	for n := 0; strings.TrimSpace(rest) != ""; n++ {
		kw := kwargRE.FindStringSubmatch(rest)
		if kw == nil {
			return callScan{}, false
		}
		rest = rest[len(kw[0]):]
		v := strings.TrimSpace(kw[2])
		switch {
		case strings.HasPrefix(v, "'") && len(v) >= 2:
			v = strconv.Quote(strings.ReplaceAll(v[1:len(v)-1], `\'`, `'`))
		case v == "True", v == "False":
			v = strings.ToLower(v)
		case v == "None":
			v = "null"
		}
		if !json.Valid([]byte(v)) {
			v = strconv.Quote(v)
		}
		if n > 0 {
			b.WriteByte(',')
		}
		key, _ := json.Marshal(kw[1])
		b.Write(key)
		b.WriteByte(':')
		b.WriteString(v)
	}
	b.WriteByte('}')
	if !json.Valid([]byte(b.String())) {
		return callScan{}, false
	}
	return callScan{name: m[1], hasName: true, args: b.String(), argsDone: true, done: true}, true
}

// scanGeneric: one JSON object {"tool_calls": [...]} at the start or
// where {"tool_calls" first appears; what follows it is content. An object
// that begins {"tool_calls": [ is read call by call as it is written (a
// stream gives each call once its name is known, then its arguments as
// they grow); another object is read whole, its "tool_calls" member the
// calls.
func scanGeneric(text string, final bool) scanned {
	const mark = `{"tool_calls"`
	var sc scanned
	pos := -1
	if s := skipSpace(text, 0); s < len(text) && text[s] == '{' {
		pos = s
	} else if n := strings.Index(text, mark); n >= 0 {
		pos = n
	}
	if pos < 0 {
		if !final && onlySpace(text) {
			sc.held = true
			return sc
		}
		sc.tail(text, final, mark)
		return sc
	}
	sc.text(text[:pos])
	// The envelope's head, {"tool_calls": [, with any space between.
	p, head := pos+1, true
	for _, l := range []string{`"tool_calls"`, ":", "["} {
		p = skipSpace(text, p)
		if strings.HasPrefix(text[p:], l) {
			p += len(l)
			continue
		}
		if !strings.HasPrefix(l, text[p:]) {
			head = false // another object
			break
		}
		// The text ends inside the head.
		if final {
			sc.cutCall(callScan{}, text[pos:])
		} else {
			sc.open = &callScan{}
		}
		return sc
	}
	if !head {
		return scanGenericWhole(sc, text, pos, final)
	}
	a := scanCallArray(text, p, Generic.argKeys())
	if a.closed && a.valid() && len(a.elems) > 0 {
		q := skipSpace(text, a.end)
		switch {
		case q < len(text) && text[q] == '}':
			for _, e := range a.elems {
				sc.call(e, "")
			}
			sc.text(text[q+1:])
			return sc
		case q == len(text): // the text ends before the object's "}"
			a.closed = false
		}
	}
	if !a.closed && !a.bad && sc.arrayItems(a, text, pos, final) {
		return sc
	}
	sc.text(text[pos:])
	return sc
}

// scanGenericWhole reads the JSON object at text[pos] whole: its
// tool_calls member's calls, or content.
func scanGenericWhole(sc scanned, text string, pos int, final bool) scanned {
	end, complete, bad := scanValue(text, pos)
	if !complete {
		if !final && !bad {
			sc.open = &callScan{}
		} else {
			sc.text(text[pos:])
		}
		return sc
	}
	var v struct {
		ToolCalls []struct {
			Name       string          `json:"name"`
			Arguments  json.RawMessage `json:"arguments"`
			Parameters json.RawMessage `json:"parameters"`
		} `json:"tool_calls"`
	}
	if json.Unmarshal([]byte(text[pos:end]), &v) != nil || len(v.ToolCalls) == 0 {
		sc.text(text[pos:])
		return sc
	}
	var calls []callScan
	for _, tc := range v.ToolCalls {
		args := tc.Arguments
		if len(args) == 0 {
			args = tc.Parameters
		}
		c := callScan{name: tc.Name, hasName: true, args: string(args), argsDone: true, done: true}
		if !c.valid() {
			sc.text(text[pos:])
			return sc
		}
		calls = append(calls, c)
	}
	for _, c := range calls {
		sc.call(c, "")
	}
	sc.text(text[end:])
	return sc
}
