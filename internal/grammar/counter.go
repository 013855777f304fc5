package grammar

import (
	"encoding/binary"
	"math"
	"slices"
)

// Counted repetitions. x{0,n} compiles to a chain O_n … O_1 with
// O_k ::= x O_(k-1) | ε, so every count is a different matcher state: a
// string under maxLength 255 walks through 255 states, none of them a
// loop, and each mask inside it would walk the whole token trie. A chain
// of at least minCounterLevel links also gets its unbounded twin
// S ::= x S | ε, laid out like each O_k (x at the same offsets).
//
// Replacing in a state s some O_k nodes, all with k >= L >= 2, by the
// same offsets in S gives a state c that the matcher handles as any
// other (here: a loop, whose mask is a cached copy). The two agree on
// every byte string of fewer than L bytes: a byte completes x in an O_k
// at most once per stack, which moves it to O_(k-1) while S stays S, so
// after j < L bytes the replaced levels are still >= L-j >= 1 and every
// stack of s still maps onto one of c (and each of c is the image of one
// of s). Longer strings can only do better from c (S never runs out), so
// s's mask is c's mask on tokens shorter than L bytes and, for longer
// ones, a walk from s over the trie's long branches alone.

const (
	// minCounterLevel: shorter chains, and links below this level, stay
	// as they are (their mask would walk most of the trie anyway).
	minCounterLevel = 4
	noLevel         = math.MaxInt32
)

// canonical is s's counter abstraction c and the least level l it
// replaced; c == s when s holds no link at minCounterLevel or above.
func (m *Matcher) canonical(s int32) (int32, int32) {
	if c := m.canon[s]; c >= 0 {
		return c, m.canonL[s]
	}
	ids := m.scratch[:0]
	l, changed := int32(noLevel), false
	for _, id := range m.states[s] {
		c, lv := m.canonNode(id)
		if c < 0 {
			changed = false
			break
		}
		changed = changed || c != id
		l = min(l, lv)
		ids = append(ids, c)
	}
	m.scratch = ids
	c := s
	if changed {
		c = m.closure(func() { m.out = append(m.out, ids...) })
		// c must have one stack for each of s's: where two stacks of s
		// differ only in their levels, s's successors may pass MaxStacks
		// (a dead end) while c's do not, and c's mask would allow what
		// Accept refuses
		if c == 0 || len(m.states[c]) != len(m.states[s]) {
			c, l = s, noLevel
		}
	}
	if c == s {
		l = noLevel
	}
	m.canon[s], m.canonL[s] = c, l
	return c, l
}

// canonNode is stack node id with every chain link at minCounterLevel or
// above replaced by its twin's, and the least level replaced (noLevel:
// none); -1 when the stack cannot be rebuilt.
func (m *Matcher) canonNode(id int32) (int32, int32) {
	g := m.g
	var path []int32
	for {
		for len(m.cnode) < len(m.nodes) {
			m.cnode, m.cmin = append(m.cnode, -1), append(m.cmin, noLevel)
		}
		if id == 0 || m.cnode[id] >= 0 {
			break
		}
		path = append(path, id)
		id = m.nodes[id].parent
	}
	cp, lv := int32(0), int32(noLevel)
	if id != 0 {
		cp, lv = m.cnode[id], m.cmin[id]
	}
	for i := len(path) - 1; i >= 0; i-- {
		n := m.nodes[path[i]]
		pos := n.pos
		r := g.elemRule[pos]
		if k := g.optLevel[r]; k >= minCounterLevel {
			pos = g.rules[g.optStar[r]][0] + pos - g.rules[r][0]
			lv = min(lv, k)
		}
		c := path[i]
		if pos != n.pos || cp != n.parent {
			if c = m.node(pos, cp); c < 0 {
				return -1, noLevel
			}
		}
		for len(m.cnode) < len(m.nodes) {
			m.cnode, m.cmin = append(m.cnode, -1), append(m.cmin, noLevel)
		}
		m.cnode[path[i]], m.cmin[path[i]] = c, lv
		cp = c
	}
	return cp, lv
}

// counterMask is the mask of s from its abstraction c (least replaced
// level l): c's mask on the tokens under l bytes and a walk from s of the
// rest, into mk (zeroed; end-of-generation bits are the caller's).
func (m *Matcher) counterMask(s, c, l int32, mk []uint32) {
	copy(mk, m.maskOf(c))
	if int(l)-1 >= m.v.trie.maxDepth {
		return
	}
	short := m.v.shortMask(int(l) - 1)
	for i := range mk {
		mk[i] &= short[i]
	}
	m.walk(&m.v.trie, s, mk, nil, 0, len(m.v.trie.b), int(l))
}

// skipInfo is what a walk may take whole below state t: when t (or its
// counter abstraction) is a loop, the trie nodes whose subtree stays in
// the loop's neighbourhood (goodTable), and the most bytes such a
// subtree may hold (an abstraction agrees with t on fewer than its level).
func (m *Matcher) skipInfo(t int32) (*goodTable, int32) {
	if m.skipDone[t] {
		return m.skipGood[t], m.skipH[t]
	}
	u, h := t, int32(noLevel)
	if c, l := m.canonical(t); c != t {
		u, h = c, l-1
	}
	good := m.goodOfState(u)
	m.skipDone[t], m.skipGood[t], m.skipH[t] = true, good, h
	return good, h
}

// goodOfState is u's neighbourhood's goodTable (nil when u has none),
// shared by every state of u's shape.
//
// A state's shape at height h is the positions of its stacks' nodes above
// the node h levels below its first stack's top, when that node is below
// every top (the floor). States are interned by position and parent, so
// the parts above their floors of two states of one shape match alike
// byte by byte, as long as nothing pops into the floor: a neighbourhood
// whose local states all still hold their floor (computed once, for the
// first state of a shape, by localFloor) has the same table for every
// state of that shape.
func (m *Matcher) goodOfState(u int32) *goodTable {
	stacks := m.states[u]
	if len(stacks) == 0 || stacks[0] == 0 {
		return m.goodOfLoop(u)
	}
	top := m.nodes[stacks[0]].pos
	for _, h := range m.heights[top] {
		if key, ok := m.shapeKey(u, h); ok {
			if gt, seen := m.shapes[key]; seen {
				return gt
			}
		}
	}
	gt := m.goodOfLoop(u)
	locals := []int32{u}
	if li := m.loopAt[u]; li != nil {
		locals = li.locals
	}
	if h, ok := m.localFloor(locals); ok {
		if key, ok := m.shapeKey(u, h); ok {
			m.shapes[key] = gt
			if !slices.Contains(m.heights[top], h) {
				m.heights[top] = append(m.heights[top], h)
			}
		}
	}
	return gt
}

func (m *Matcher) goodOfLoop(u int32) *goodTable {
	if li := m.loopOf(u); li != nil {
		return li.goodOf(m.v)
	}
	return nil
}

// localFloor is the height above which locals[0]'s first stack leaves
// the deepest node below every top of every state of locals (false when
// there is none, or it is too deep for the bound on stack depth to act
// alike at another depth).
func (m *Matcher) localFloor(locals []int32) (int32, bool) {
	m.markGen++
	if len(m.mark) < len(m.nodes) {
		m.mark = append(m.mark, make([]uint32, len(m.nodes)-len(m.mark))...)
	}
	first := m.states[locals[0]][0]
	for id := m.nodes[first].parent; id != 0; id = m.nodes[id].parent {
		m.mark[id] = m.markGen
	}
	floor := m.nodes[first].parent
	for _, u := range locals {
		for _, top := range m.states[u] {
			if top == 0 {
				return 0, false
			}
			id := m.nodes[top].parent
			for id != 0 && m.mark[id] != m.markGen {
				id = m.nodes[id].parent
			}
			if id == 0 {
				return 0, false
			}
			if m.nodes[id].depth < m.nodes[floor].depth {
				floor = id
			}
			if m.nodes[top].depth-m.nodes[id].depth > maxStackDepth/4 {
				return 0, false
			}
		}
	}
	return m.nodes[first].depth - m.nodes[floor].depth, true
}

// shapeKey is state s's shape at height h (false when the node h levels
// below its first top is not below every top, or lies too deep).
func (m *Matcher) shapeKey(s int32, h int32) (string, bool) {
	stacks := m.states[s]
	f := stacks[0]
	for range h {
		f = m.nodes[f].parent
	}
	fd := m.nodes[f].depth
	if f == 0 || fd > maxStackDepth/2 {
		return "", false
	}
	seqs := m.seqs[:0]
	for _, top := range stacks {
		if top == 0 || m.nodes[top].depth <= fd {
			return "", false
		}
		var seq []int32
		id := top
		for ; m.nodes[id].depth > fd; id = m.nodes[id].parent {
			seq = append(seq, m.nodes[id].pos)
		}
		if id != f {
			return "", false
		}
		seqs = append(seqs, seq)
	}
	slices.SortFunc(seqs, slices.Compare)
	key := m.key[:0]
	for _, seq := range seqs {
		for _, p := range seq {
			key = binary.LittleEndian.AppendUint32(key, uint32(p))
		}
		key = binary.LittleEndian.AppendUint32(key, ^uint32(0))
	}
	m.key, m.seqs = key, seqs[:0]
	return string(key), true
}
