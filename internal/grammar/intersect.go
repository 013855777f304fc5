package grammar

import (
	"strconv"
	"strings"
	"sync"
)

// Intersections of string constraints. A string schema may carry a
// format, a pattern and a length range at once (zod's z.email() writes
// format and pattern; z.string().regex(r).max(n) pattern and maxLength).
// Each constraint alone is a GBNF expression over the string's
// serialized bytes; their intersection is the product of their byte
// automata, built by running each expression's own matcher (a grammar
// with only tail recursion is a finite automaton over bytes) in step,
// with the length counted beside them. The product is explored over
// printable ASCII without " and \ (asciiContent), where one byte is one
// character: that is exact when some constraint's language lies within
// that alphabet (every format here does; a pattern is checked), and the
// intersection is refused otherwise. States that cannot reach an end are
// dropped, so every prefix the mask allows can still complete. The
// product is written back as right-linear rules, one per state.

// maxProductStates caps the states of one intersection.
const maxProductStates = 4096

// maxComponentStates caps the states explored of one constraint's
// automaton when checking its alphabet.
const maxComponentStates = 4096

// asciiContent reports whether b is a character a JSON string holds as
// itself and counts as one: printable ASCII other than " and \.
func asciiContent(b byte) bool { return b >= 0x20 && b < 0x7F && b != '"' && b != '\\' }

// constraint is one of a string's constraints as a GBNF expression over
// its contents, with the keyword it came from.
type constraint struct {
	keyword string
	expr    string
}

var (
	intersectVocabOnce sync.Once
	intersectVocab     *Vocab
)

// componentMatcher compiles expr (with the JSON and format rules) as a
// grammar of its own and returns a matcher that shares nothing.
func componentMatcher(expr string) (*Matcher, error) {
	g, err := Compile("root ::= " + expr + "\n" + jsonBaseRules + formatRules)
	if err != nil {
		return nil, err
	}
	intersectVocabOnce.Do(func() { intersectVocab, _ = NewVocab([][]byte{{'a'}}, nil) })
	return newMatcher(g, intersectVocab), nil
}

// capped steps m from s by b and reports whether the step hit one of the
// matcher's caps (a state that would then be dead although the grammar
// goes on).
func cappedStep(m *Matcher, s int32, b byte) (int32, bool) {
	m.capped = false
	t := m.step(s, b)
	return t, m.capped
}

// asciiOnly reports whether every string m's grammar matches is made of
// asciiContent bytes: no other byte leads anywhere from a reachable state.
func asciiOnly(m *Matcher) (bool, error) {
	seen := map[int32]bool{m.start: true}
	queue := []int32{m.start}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		for b := range 256 {
			t, capped := cappedStep(m, s, byte(b))
			if capped {
				return false, errorf("%w: the pattern's automaton passes the matcher's caps", ErrTooLarge)
			}
			if t == 0 {
				continue
			}
			if !asciiContent(byte(b)) {
				return false, nil
			}
			if !seen[t] {
				if len(seen) >= maxComponentStates {
					return false, errorf("%w: more than %d states", ErrTooLarge, maxComponentStates)
				}
				seen[t] = true
				queue = append(queue, t)
			}
		}
	}
	return true, nil
}

// intersect writes the intersection of cs and a length of minL to maxL
// characters (maxL < 0: no upper bound) as a rule for a whole JSON string
// (quotes included) and returns its name. The first constraint whose
// language lies within asciiContent makes the product exact; with none,
// the refusal names the last constraint's keyword.
func (g *schemaGen) intersect(path string, cs []constraint, minL, maxL int) (string, error) {
	ms := make([]*Matcher, len(cs))
	exact := false
	for i, c := range cs {
		m, err := componentMatcher(c.expr)
		if err != nil {
			return "", g.errf(path, c.keyword, ErrUnsupported, "%v", err)
		}
		ms[i] = m
		if !exact {
			ok, err := asciiOnly(m)
			if err != nil {
				return "", g.errf(path, c.keyword, ErrTooLarge, "%v", err)
			}
			exact = ok
		}
	}
	if !exact {
		return "", g.errf(path, cs[len(cs)-1].keyword, ErrUnsupported,
			"beside another string constraint: enforced exactly only where one of them allows printable ASCII alone")
	}
	// a product state: each component's state, then the length so far
	// (capped at minL when there is no upper bound)
	lenCap := maxL
	if maxL < 0 {
		lenCap = minL
	}
	type pstate struct {
		parts string // the components' states, 4 bytes each
		n     int
	}
	key := func(ss []int32, n int) pstate {
		var b strings.Builder
		for _, s := range ss {
			b.WriteString(string([]byte{byte(s), byte(s >> 8), byte(s >> 16), byte(s >> 24)}))
		}
		return pstate{b.String(), n}
	}
	var (
		states [][]int32
		lens   []int
		index  = map[pstate]int{}
		edges  [][]int // edges[i][b]: the state after byte b, -1 none
	)
	add := func(ss []int32, n int) (int, error) {
		k := key(ss, n)
		if i, ok := index[k]; ok {
			return i, nil
		}
		if len(states) >= maxProductStates {
			return 0, g.errf(path, cs[len(cs)-1].keyword, ErrTooLarge,
				"the intersection of the string's constraints has more than %d states", maxProductStates)
		}
		index[k] = len(states)
		states = append(states, ss)
		lens = append(lens, n)
		return len(states) - 1, nil
	}
	start := make([]int32, len(ms))
	for i, m := range ms {
		start[i] = m.start
	}
	if _, err := add(start, 0); err != nil {
		return "", err
	}
	for i := 0; i < len(states); i++ {
		row := make([]int, 128)
		for b := range row {
			row[b] = -1
		}
		n := lens[i]
		if maxL >= 0 && n >= maxL {
			edges = append(edges, row)
			continue
		}
		if n < lenCap {
			n++
		}
		for b := byte(0x20); b < 0x7F; b++ {
			if !asciiContent(b) {
				continue
			}
			next := make([]int32, len(ms))
			live := true
			for j, m := range ms {
				t, capped := cappedStep(m, states[i][j], b)
				if capped {
					return "", g.errf(path, cs[j].keyword, ErrTooLarge, "the constraint's automaton passes the matcher's caps")
				}
				if t == 0 {
					live = false
					break
				}
				next[j] = t
			}
			if !live {
				continue
			}
			t, err := add(next, n)
			if err != nil {
				return "", err
			}
			row[b] = t
		}
		edges = append(edges, row)
	}
	accepting := func(i int) bool {
		if lens[i] < minL {
			return false
		}
		for j, m := range ms {
			if !m.accepting(states[i][j]) {
				return false
			}
		}
		return true
	}
	// keep the states from which an end is reachable
	rev := make([][]int, len(states))
	for i, row := range edges {
		for _, t := range row {
			if t >= 0 {
				rev[t] = append(rev[t], i)
			}
		}
	}
	alive := make([]bool, len(states))
	var stack []int
	for i := range states {
		if accepting(i) {
			alive[i] = true
			stack = append(stack, i)
		}
	}
	for len(stack) > 0 {
		t := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, i := range rev[t] {
			if !alive[i] {
				alive[i] = true
				stack = append(stack, i)
			}
		}
	}
	if !alive[0] {
		return "", g.errf(path, cs[len(cs)-1].keyword, ErrUnsupported, "no string satisfies the string's constraints together")
	}
	names := make([]string, len(states))
	for i := range states {
		if alive[i] {
			g.nrules++
			names[i] = "r" + strconv.Itoa(g.nrules)
		}
	}
	for i := range states {
		if !alive[i] {
			continue
		}
		var alts []string
		if accepting(i) {
			alts = append(alts, `""`)
		}
		// one alternative per target: the bytes that lead there as a class
		var order []int
		byTarget := map[int][]byte{}
		for b, t := range edges[i] {
			if t < 0 || !alive[t] {
				continue
			}
			if _, ok := byTarget[t]; !ok {
				order = append(order, t)
			}
			byTarget[t] = append(byTarget[t], byte(b))
		}
		for _, t := range order {
			alts = append(alts, byteClass(byTarget[t])+" "+names[t])
		}
		if err := g.define(names[i], strings.Join(alts, " | ")); err != nil {
			return "", err
		}
	}
	return g.rule(`"\"" ` + names[0] + ` "\""`)
}

// byteClass writes ASCII bytes (ascending) as a GBNF character class of
// ranges; letters and digits as themselves, the rest as \xHH.
func byteClass(bs []byte) string {
	var b strings.Builder
	b.WriteByte('[')
	ch := func(c byte) {
		if c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			b.WriteByte(c)
			return
		}
		b.WriteString(`\x`)
		b.WriteString(strconv.FormatUint(uint64(c)>>4, 16))
		b.WriteString(strconv.FormatUint(uint64(c)&15, 16))
	}
	for i := 0; i < len(bs); {
		j := i
		for j+1 < len(bs) && bs[j+1] == bs[j]+1 {
			j++
		}
		ch(bs[i])
		if j > i {
			if j > i+1 {
				b.WriteByte('-')
			}
			ch(bs[j])
		}
		i = j + 1
	}
	b.WriteByte(']')
	return b.String()
}

// matchesContent reports whether m's grammar matches the serialized
// contents of string s (its JSON form without the quotes).
func matchesContent(m *Matcher, s string) bool {
	var b strings.Builder
	writeString(&b, s)
	q := b.String()
	st := m.start
	for i := 1; i < len(q)-1 && st != 0; i++ {
		st = m.step(st, q[i])
	}
	return st != 0 && m.accepting(st)
}

// overlap reports whether two constraints' automata match a common string
// (a product over every byte); an error where the product passes its caps.
func overlap(a, b *Matcher) (bool, error) {
	type pair struct{ x, y int32 }
	seen := map[pair]bool{{a.start, b.start}: true}
	queue := []pair{{a.start, b.start}}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if a.accepting(p.x) && b.accepting(p.y) {
			return true, nil
		}
		for c := range 256 {
			x, capA := cappedStep(a, p.x, byte(c))
			y, capB := cappedStep(b, p.y, byte(c))
			if capA || capB {
				return false, errorf("%w: a pattern's automaton passes the matcher's caps", ErrTooLarge)
			}
			if x == 0 || y == 0 || seen[pair{x, y}] {
				continue
			}
			if len(seen) >= maxProductStates {
				return false, errorf("%w: more than %d states", ErrTooLarge, maxProductStates)
			}
			seen[pair{x, y}] = true
			queue = append(queue, pair{x, y})
		}
	}
	return false, nil
}

// patternKeys writes the key-value alternatives of patternProperties pp
// for an object whose additionalProperties is false: a key matching
// pattern i takes schema i. Exact when no named property matches a
// pattern and no key matches two (both decided on the patterns'
// automata); otherwise refused naming patternProperties.
func (g *schemaGen) patternKeys(pp *jsonObject, names []string, path string, depth int) (string, error) {
	var ms []*Matcher
	var alts []string
	for i, p := range pp.keys {
		e, err := regexToGBNF(p)
		if err != nil {
			return "", g.errf(path, "patternProperties", ErrUnsupported, "%v", err)
		}
		m, err := componentMatcher(e)
		if err != nil {
			return "", g.errf(path, "patternProperties", ErrUnsupported, "%v", err)
		}
		for _, n := range names {
			if matchesContent(m, n) {
				return "", g.errf(path, "patternProperties", ErrUnsupported, "property %q also matches pattern %q", n, p)
			}
		}
		for j, prev := range ms {
			both, err := overlap(prev, m)
			if err != nil {
				return "", g.errf(path, "patternProperties", ErrTooLarge, "%v", err)
			}
			if both {
				return "", g.errf(path, "patternProperties", ErrUnsupported, "patterns %q and %q may both match a key", pp.keys[j], p)
			}
		}
		ms = append(ms, m)
		if pp.vals[i] == false {
			continue
		}
		v, err := g.gen(pp.vals[i], path+"/patternProperties/"+p, depth+1)
		if err != nil {
			return "", err
		}
		alts = append(alts, `"\"" `+e+` "\"" ":" `+v)
	}
	if len(alts) == 0 {
		return "", nil
	}
	return g.rule(strings.Join(alts, " | "))
}
