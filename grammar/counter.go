package grammar

import "math"

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
		if c == 0 {
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
	var good *goodTable
	if li := m.loopOf(u); li != nil {
		good = li.goodOf(m.v)
	}
	m.skipDone[t], m.skipGood[t], m.skipH[t] = true, good, h
	return good, h
}
