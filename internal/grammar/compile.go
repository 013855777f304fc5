package grammar

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxGrammarElems caps a compiled grammar's elements (terminals, rule
// references and alternative ends), so a grammar's repetitions cannot
// expand without bound.
const maxGrammarElems = 1 << 20

type elemKind uint8

const (
	eEnd  elemKind = iota // end of an alternative
	eTerm                 // one byte in sets[arg]
	eRef                  // rule arg
)

type elem struct {
	kind elemKind
	arg  int32
}

// Grammar is a compiled grammar: byte terminals and rule references laid
// out one alternative after another. It is immutable and safe to share,
// also between goroutines; its one mutable part is the cache of masks its
// matchers share (shared.go), which is synchronized.
type Grammar struct {
	elems []elem
	sets  []byteSet
	rules [][]int32 // each rule's alternative starts (indices into elems)
	names []string
	root  int32
	// minRoot: the fewest bytes of a sentence (costTables)
	minRoot int32

	// Counted repetitions x{0,n} (see counter.go): elemRule is the rule
	// each element belongs to; a rule O_k of a chain has optLevel k and
	// optStar the chain's unbounded twin S ::= x S | ε (0 elsewhere).
	elemRule []int32
	optLevel []int32
	optStar  []int32

	// minLen: per element, the fewest bytes from it to its alternative's
	// end; rise: what expanding after a byte may add to a stack's cost
	// (-1: unbounded); budget.go
	minLen []int32
	rise   int32

	// the masks its matchers share, per vocabulary (shared.go)
	cache grammarShared
}

// Compile parses a GBNF grammar and compiles it. A malformed grammar is a
// *SyntaxError with its line and column; an undefined rule wraps
// ErrUndefinedRule, left recursion ErrLeftRecursion, a grammar past the
// caps ErrTooLarge, token terminals ErrUnsupported (as a *SyntaxError).
func Compile(src string) (*Grammar, error) {
	s, err := parse(src)
	if err != nil {
		return nil, err
	}
	c := &compiler{s: s, ids: map[string]int32{}, classes: map[string]int32{}, setIdx: map[byteSet]int32{},
		optLevel: map[int32]int32{}, optStar: map[int32]int32{}}
	for _, name := range s.order {
		c.ids[name] = int32(len(c.alts))
		c.alts = append(c.alts, nil)
		c.names = append(c.names, name)
		c.owner = append(c.owner, name)
	}
	for _, name := range s.order {
		id := c.ids[name]
		c.rule = name
		alts, err := c.alternates(s.rules[name])
		if err != nil {
			return nil, err
		}
		c.alts[id] = alts
	}
	g := c.flatten()
	g.root = c.ids["root"]
	if id := g.leftRecursive(); id >= 0 {
		name := c.owner[id]
		at := s.at[name]
		return nil, &RuleError{Line: at[0], Col: at[1], Rule: name, Err: ErrLeftRecursion,
			Msg: sprintf("rule %q can reach itself before matching a byte", name)}
	}
	g.costTables()
	return g, nil
}

type compiler struct {
	s       *syntax
	ids     map[string]int32
	alts    [][][]elem // per rule, alternatives (without end markers)
	names   []string
	classes map[string]int32 // helper rule per multi-byte class
	sets    []byteSet
	setIdx  map[byteSet]int32
	size    int
	// optLevel, optStar: per helper rule of a counted chain (see Grammar)
	optLevel map[int32]int32
	optStar  map[int32]int32
	// nullRule: the rules that match the empty string (flatRepeat)
	nullRule map[string]bool
	// rule is the rule being compiled; owner, per rule id, the rule of
	// the text it was defined in (a helper's: the rule it is part of)
	rule  string
	owner []string
}

func (c *compiler) grow(n int) error {
	c.size += n
	if c.size > maxGrammarElems {
		return errorf("%w: more than %d compiled elements", ErrTooLarge, maxGrammarElems)
	}
	return nil
}

func (c *compiler) set(s byteSet) int32 {
	if id, ok := c.setIdx[s]; ok {
		return id
	}
	id := int32(len(c.sets))
	c.sets = append(c.sets, s)
	c.setIdx[s] = id
	return id
}

func (c *compiler) helper(name string, alts [][]elem) (elem, error) {
	n := 1
	for _, a := range alts {
		n += len(a) + 1
	}
	if err := c.grow(n); err != nil {
		return elem{}, err
	}
	id := int32(len(c.alts))
	c.alts = append(c.alts, alts)
	c.names = append(c.names, name)
	c.owner = append(c.owner, c.rule)
	return elem{kind: eRef, arg: id}, nil
}

func (c *compiler) alternates(alts [][]*node) ([][]elem, error) {
	out := make([][]elem, 0, len(alts))
	for _, seq := range alts {
		var es []elem
		for _, n := range seq {
			u, err := c.unit(n)
			if err != nil {
				return nil, err
			}
			es = append(es, u...)
		}
		if err := c.grow(len(es) + 1); err != nil {
			return nil, err
		}
		out = append(out, es)
	}
	return out, nil
}

// unit compiles one syntax node to the elements that match it in sequence.
func (c *compiler) unit(n *node) ([]elem, error) {
	switch n.kind {
	case nLit:
		var es []elem
		var buf [4]byte
		for _, r := range n.lit {
			k := utf8.EncodeRune(buf[:], r)
			for _, b := range buf[:k] {
				var s byteSet
				s.add(b, b)
				es = append(es, elem{kind: eTerm, arg: c.set(s)})
			}
		}
		return es, c.grow(len(es))
	case nClass:
		return c.class(n)
	case nRef:
		return []elem{{kind: eRef, arg: c.ids[n.name]}}, nil
	case nGroup:
		alts, err := c.alternates(n.alts)
		if err != nil {
			return nil, err
		}
		if len(alts) == 1 {
			return alts[0], nil
		}
		h, err := c.helper("group", alts)
		return []elem{h}, err
	case nRepeat:
		return c.repeat(n)
	}
	return nil, errorf("%w: node kind %d", ErrUnsupported, n.kind)
}

func (c *compiler) class(n *node) ([]elem, error) {
	ranges := normalize(n.ranges, n.neg)
	var kb strings.Builder
	for _, r := range ranges {
		kb.WriteString(strconv.Itoa(int(r.lo)) + "-" + strconv.Itoa(int(r.hi)) + ",")
	}
	key := kb.String()
	if id, ok := c.classes[key]; ok {
		return []elem{{kind: eRef, arg: id}}, nil
	}
	seqs := utf8Seqs(ranges)
	var single byteSet
	var hasSingle bool
	var multi [][]elem
	for _, sq := range seqs {
		if len(sq) == 1 {
			single.add(sq[0].lo, sq[0].hi)
			hasSingle = true
			continue
		}
		es := make([]elem, len(sq))
		for i, br := range sq {
			var s byteSet
			s.add(br.lo, br.hi)
			es[i] = elem{kind: eTerm, arg: c.set(s)}
		}
		multi = append(multi, es)
	}
	if len(multi) == 0 {
		if !hasSingle {
			return nil, errorf("%w: empty character class at line %d, column %d", ErrUnsupported, n.line, n.col)
		}
		return []elem{{kind: eTerm, arg: c.set(single)}}, c.grow(1)
	}
	alts := multi
	if hasSingle {
		alts = append([][]elem{{{kind: eTerm, arg: c.set(single)}}}, multi...)
	}
	h, err := c.helper("class", alts)
	if err != nil {
		return nil, err
	}
	c.classes[key] = h.arg
	return []elem{h}, nil
}

// repeat compiles x{min,max} to right-recursive helper rules whose
// recursive call is in tail position, so matching does not grow the stack.
func (c *compiler) repeat(n *node) ([]elem, error) {
	n = c.flatRepeat(n)
	x, err := c.unit(n.sub)
	if err != nil {
		return nil, err
	}
	if err := c.grow(len(x) * n.min); err != nil {
		return nil, err
	}
	var out []elem
	for range n.min {
		out = append(out, x...)
	}
	if n.max < 0 {
		// R ::= x R | ε
		id := int32(len(c.alts))
		self := elem{kind: eRef, arg: id}
		h, err := c.helper("star", [][]elem{append(slices.Clone(x), self), {}})
		if err != nil {
			return nil, err
		}
		return append(out, h), nil
	}
	if n.max > n.min {
		// O1 ::= x | ε ; Ok ::= x O(k-1) | ε; a long chain also gets its
		// unbounded twin S ::= x S | ε, whose states stand for the chain's
		// while no token can count down to its end (counter.go)
		star := int32(0)
		if n.max-n.min >= minCounterLevel {
			star = int32(len(c.alts))
			self := elem{kind: eRef, arg: star}
			if _, err := c.helper("count", [][]elem{append(slices.Clone(x), self), {}}); err != nil {
				return nil, err
			}
		}
		var prev []elem
		for k := range n.max - n.min {
			h, err := c.helper("opt", [][]elem{append(slices.Clone(x), prev...), {}})
			if err != nil {
				return nil, err
			}
			if star != 0 {
				c.optLevel[h.arg], c.optStar[h.arg] = int32(k+1), star
			}
			prev = []elem{h}
		}
		out = append(out, prev...)
	}
	return out, nil
}

// flatRepeat writes a repetition of a repetition, (x{a,b}){c,d}, as one
// repetition of x when the counts it allows form one interval: x repeated
// n times for n in the union over k in [c,d] of [k·a, k·b], which is
// [c·a, d·b] when consecutive intervals touch. A nullable y has
// y{c,d} = y{0,d} (ε pads the missing copies), so a nullable x or x{a,b}
// counts from 0. The language is the same; the nested form is ambiguous
// (a string of x's splits many ways), and its parses are matcher stacks:
// ("a"{0,300}){0,300} holds tens of thousands of them after a few
// hundred bytes, past MaxStacks.
func (c *compiler) flatRepeat(n *node) *node {
	for {
		in := n.sub
		for in.kind == nGroup && len(in.alts) == 1 && len(in.alts[0]) == 1 {
			in = in.alts[0][0]
		}
		if in.kind != nRepeat {
			return n
		}
		a, b, cmin := in.min, in.max, n.min
		if c.nullable(in.sub) {
			a = 0
		}
		if a == 0 {
			cmin = 0
		}
		lo, hi, ok := countUnion(a, b, cmin, n.max)
		if !ok {
			return n
		}
		n = &node{kind: nRepeat, sub: in.sub, min: lo, max: hi, line: n.line, col: n.col}
	}
}

// nullable reports whether n matches the empty string.
func (c *compiler) nullable(n *node) bool {
	if c.nullRule == nil {
		c.nullRule = map[string]bool{}
		for changed := true; changed; {
			changed = false
			for name, alts := range c.s.rules {
				if !c.nullRule[name] && c.nullableAlts(alts) {
					c.nullRule[name], changed = true, true
				}
			}
		}
	}
	switch n.kind {
	case nLit:
		return len(n.lit) == 0
	case nRef:
		return c.nullRule[n.name]
	case nGroup:
		return c.nullableAlts(n.alts)
	case nRepeat:
		return n.min == 0 || c.nullable(n.sub)
	}
	return false
}

func (c *compiler) nullableAlts(alts [][]*node) bool {
	for _, seq := range alts {
		all := true
		for _, x := range seq {
			if !c.nullable(x) {
				all = false
				break
			}
		}
		if all {
			return true
		}
	}
	return false
}

// maxFlatCount bounds the counts flatRepeat writes (past it the compiled
// grammar would be ErrTooLarge anyway, and products must not overflow).
const maxFlatCount = 1 << 40

// countUnion is the union over k in [c,d] of [k·a, k·b] (a negative
// upper bound is unbounded) as one interval [lo, hi], when it is one.
func countUnion(a, b, c, d int) (lo, hi int, ok bool) {
	if d == 0 || b == 0 {
		return 0, 0, true
	}
	// the first k >= 1 that adds an interval; with c == 0 the count 0
	// comes first, and [a, b] must touch it
	k0 := max(c, 1)
	if c == 0 && a > 1 {
		return 0, 0, false
	}
	if b < 0 {
		return c * a, -1, true
	}
	// [k·a, k·b] and [(k+1)·a, (k+1)·b] touch when a-1 <= k·(b-a); the
	// tightest k is the first one that has a successor
	if (d < 0 || d > k0) && a-1 > k0*(b-a) {
		return 0, 0, false
	}
	if d < 0 {
		return c * a, -1, true
	}
	if d > maxFlatCount/b || c*a > maxFlatCount {
		return 0, 0, false
	}
	return c * a, d * b, true
}

func (c *compiler) flatten() *Grammar {
	g := &Grammar{sets: c.sets, names: c.names, rules: make([][]int32, len(c.alts)),
		optLevel: make([]int32, len(c.alts)), optStar: make([]int32, len(c.alts))}
	for id, alts := range c.alts {
		for _, a := range alts {
			g.rules[id] = append(g.rules[id], int32(len(g.elems)))
			g.elems = append(g.elems, a...)
			g.elems = append(g.elems, elem{kind: eEnd})
			for range len(a) + 1 {
				g.elemRule = append(g.elemRule, int32(id))
			}
		}
	}
	for id, k := range c.optLevel {
		g.optLevel[id], g.optStar[id] = k, c.optStar[id]
	}
	return g
}

// leftRecursive is a rule that can reach itself through nullable
// prefixes with something left to match after the call (the stack would
// grow without consuming input), -1 for none. Cycles made only of tail
// calls are fine: the matcher's closure stops at a repeated position.
func (g *Grammar) leftRecursive() int {
	n := len(g.rules)
	nullable := make([]bool, n)
	for changed := true; changed; {
		changed = false
		for id, alts := range g.rules {
			if nullable[id] {
				continue
			}
			for _, p := range alts {
				if g.nullableFrom(p, nullable) {
					nullable[id], changed = true, true
					break
				}
			}
		}
	}
	type edge struct {
		to   int32
		tail bool
	}
	edges := make([][]edge, n)
	for id, alts := range g.rules {
		for _, p := range alts {
			for ; g.elems[p].kind == eRef; p++ {
				to := g.elems[p].arg
				edges[id] = append(edges[id], edge{to, g.elems[p+1].kind == eEnd})
				if !nullable[to] {
					break
				}
			}
		}
	}
	// Tarjan's strongly connected components, iteratively.
	index := make([]int32, n)
	low := make([]int32, n)
	comp := make([]int32, n)
	onStack := make([]bool, n)
	for i := range index {
		index[i] = -1
	}
	var stack []int32
	var next, ncomp int32
	type frame struct {
		v int32
		e int
	}
	for root := range n {
		if index[root] >= 0 {
			continue
		}
		call := []frame{{int32(root), 0}}
		index[root], low[root] = next, next
		next++
		stack = append(stack, int32(root))
		onStack[root] = true
		for len(call) > 0 {
			f := &call[len(call)-1]
			if f.e < len(edges[f.v]) {
				w := edges[f.v][f.e].to
				f.e++
				if index[w] < 0 {
					index[w], low[w] = next, next
					next++
					stack = append(stack, w)
					onStack[w] = true
					call = append(call, frame{w, 0})
				} else if onStack[w] {
					low[f.v] = min(low[f.v], index[w])
				}
				continue
			}
			v := f.v
			call = call[:len(call)-1]
			if len(call) > 0 {
				u := call[len(call)-1].v
				low[u] = min(low[u], low[v])
			}
			if low[v] == index[v] {
				for {
					w := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					onStack[w] = false
					comp[w] = ncomp
					if w == v {
						break
					}
				}
				ncomp++
			}
		}
	}
	for id := range edges {
		for _, e := range edges[id] {
			if !e.tail && comp[e.to] == comp[id] {
				return id
			}
		}
	}
	return -1
}

func (g *Grammar) nullableFrom(p int32, nullable []bool) bool {
	for ; ; p++ {
		switch e := g.elems[p]; e.kind {
		case eEnd:
			return true
		case eTerm:
			return false
		case eRef:
			if !nullable[e.arg] {
				return false
			}
		}
	}
}
