package grammar

// Budget-aware closing. Every grammar position knows the fewest bytes
// that end its alternative (minLen), so a stack knows the fewest bytes
// that end the grammar (the sum over its nodes) and a state the fewest
// over its stacks (Shortest). With a single-byte token for some byte of
// every terminal (CanClose), that many tokens always suffice, and
// MaskWithin allows only the tokens after which the rest still fits in
// the tokens left: a turn cut by its budget ends with a complete sentence
// of the grammar.
//
// A byte lowers a stack's cost by one and expanding what follows raises
// it by at most rise (a grammar constant, computed at Compile), so while
// the budget exceeds the costliest stack by rise per byte of the longest
// piece, every allowed token fits and MaskWithin is Mask.

// infCost is the cost of what cannot end (a rule with no finite
// derivation); costs saturate there.
const infCost = 1 << 30

func addCost(a, b int32) int32 { return int32(min(int64(a)+int64(b), infCost)) }

// costTables fills g.minLen (per element position, the fewest bytes from
// it to its alternative's end) and g.rise (-1: no bound found).
func (g *Grammar) costTables() {
	minRule := make([]int32, len(g.rules))
	for i := range minRule {
		minRule[i] = infCost
	}
	altLen := func(p int32) int32 {
		n := int32(0)
		for ; g.elems[p].kind != eEnd; p++ {
			if e := g.elems[p]; e.kind == eTerm {
				n = addCost(n, 1)
			} else {
				n = addCost(n, minRule[e.arg])
			}
		}
		return n
	}
	for changed := true; changed; {
		changed = false
		for r, alts := range g.rules {
			for _, p := range alts {
				if n := altLen(p); n < minRule[r] {
					minRule[r], changed = n, true
				}
			}
		}
	}
	g.minRoot = minRule[g.root]
	g.minLen = make([]int32, len(g.elems))
	for p := len(g.elems) - 1; p >= 0; p-- {
		switch e := g.elems[p]; e.kind {
		case eEnd:
			g.minLen[p] = 0
		case eTerm:
			g.minLen[p] = addCost(1, g.minLen[p+1])
		case eRef:
			g.minLen[p] = addCost(minRule[e.arg], g.minLen[p+1])
		}
	}
	// R(p): how much more than minLen(p) a stack reached by expanding p
	// (before its next byte) may cost; an end pops into a continuation,
	// bounded by the most of any continuation (rcont).
	R := make([]int32, len(g.elems))
	const maxRounds, maxRise = 256, 1 << 16
	g.rise = -1
	for range maxRounds {
		rcont := int32(0)
		for p, e := range g.elems {
			if e.kind == eRef && g.elems[p+1].kind != eEnd {
				rcont = max(rcont, R[p+1])
			}
		}
		changed := false
		for p, e := range g.elems {
			v := int32(0)
			switch e.kind {
			case eEnd:
				v = rcont
			case eRef:
				for _, a := range g.rules[e.arg] {
					if g.minLen[a] < infCost && minRule[e.arg] < infCost {
						v = max(v, g.minLen[a]-minRule[e.arg]+R[a])
					}
				}
			}
			if v > maxRise {
				return
			}
			if v != R[p] {
				R[p], changed = v, true
			}
		}
		if !changed {
			rise := int32(0)
			for p, e := range g.elems {
				if e.kind == eTerm {
					rise = max(rise, R[p+1])
				}
			}
			g.rise = rise
			return
		}
	}
}

// Shortest is the fewest bytes of a sentence of the grammar (its root
// rule's shortest derivation): the tokens, one single-byte token a byte,
// that a budget needs at least to close it (Matcher.Shortest from the
// start, without a vocabulary); -1 where the root has no finite one.
func (g *Grammar) Shortest() int {
	if g.minRoot >= infCost {
		return -1
	}
	return int(g.minRoot)
}

// nodeCost is the fewest bytes that end the grammar from stack id.
func (m *Matcher) nodeCost(id int32) int32 {
	for len(m.ncost) < len(m.nodes) {
		m.ncost = append(m.ncost, -1)
	}
	if id == 0 {
		return 0
	}
	if c := m.ncost[id]; c >= 0 {
		return c
	}
	n := m.nodes[id]
	c := addCost(m.g.minLen[n.pos], m.nodeCost(n.parent))
	m.ncost[id] = c
	return c
}

// stateCost is the least and the most cost of s's stacks.
func (m *Matcher) stateCost(s int32) (lo, hi int32) {
	lo = infCost
	for _, id := range m.states[s] {
		c := m.nodeCost(id)
		lo = min(lo, c)
		if c < infCost {
			hi = max(hi, c)
		}
	}
	return lo, hi
}

// Shortest is the fewest bytes that complete the grammar from here: 0
// where it may end, -1 where it cannot be completed (the end was
// accepted, or no stack is left).
func (m *Matcher) Shortest() int {
	if m.done {
		return -1
	}
	lo, _ := m.stateCost(m.cur)
	if lo >= infCost {
		return -1
	}
	return int(lo)
}

// CanClose reports whether every terminal of the grammar holds a byte
// that the vocabulary has as a single-byte text token, so that Shortest
// bytes take at most as many tokens (MaskWithin's premise).
func (m *Matcher) CanClose() bool {
	var single byteSet
	for id, p := range m.v.pieces {
		if len(p) == 1 && m.v.kinds[id] == TokenText {
			single.add(p[0], p[0])
		}
	}
	for _, e := range m.g.elems {
		if e.kind != eTerm {
			continue
		}
		set, ok := m.g.sets[e.arg], false
		for w := range set {
			if set[w]&single[w] != 0 {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// MaskWithin is Mask restricted to the tokens after which the grammar
// can still be completed in left more tokens (one token a byte: see
// CanClose), so that a generation cut after left more tokens ends with a
// complete sentence. With left < 0 (no token may follow this one) it is
// end of generation alone where the grammar may end here, else as left 0.
// Where no token fits (the budget was too small from the start) it is
// Mask. The returned mask is the caller's to keep and must not be
// modified (it may be Mask's shared copy).
func (m *Matcher) MaskWithin(left int) []uint32 {
	mk := m.Mask()
	if m.done || left >= infCost {
		return mk
	}
	if left < 0 && m.accepting(m.cur) && len(m.v.eog) > 0 {
		out := make([]uint32, len(mk))
		for _, id := range m.v.eog {
			out[id>>5] |= 1 << (id & 31)
		}
		return out
	}
	l := int32(max(left, 0))
	_, hi := m.stateCost(m.cur)
	if r := m.g.rise; r >= 0 && int64(l) >= int64(hi)+int64(m.v.trie.maxDepth)*int64(max(r-1, 0)) {
		return mk
	}
	// the costliest state a token reaches from here, once per state: a
	// state met again (inside a string, an array) needs no walk while the
	// budget covers it
	ma, ok := m.maxAfter[m.cur]
	if !ok {
		ma = m.costliestAfter(m.cur)
		m.maxAfter[m.cur] = ma
	}
	if l >= ma {
		return mk
	}
	out := make([]uint32, len(mk))
	if !m.walkWithin(m.cur, l, out) {
		return mk
	}
	if m.accepting(m.cur) {
		for _, id := range m.v.eog {
			out[id>>5] |= 1 << (id & 31)
		}
	}
	return out
}

// walkWithin sets in mk the tokens after which s's grammar can end in
// at most left bytes, stepping every trie node it does not prune (a
// subtree whose deepest token cannot bring the cost down to left); it
// reports whether it set any.
func (m *Matcher) walkWithin(s, left int32, mk []uint32) bool {
	tr := &m.v.trie
	at := m.stateAt
	at[0] = s
	any := false
	for i := 0; i < len(tr.b); {
		d := tr.depth[i]
		t := m.step(at[d-1], tr.b[i])
		if t == 0 {
			i = int(tr.next[i])
			continue
		}
		c, _ := m.stateCost(t)
		if int64(c)-int64(tr.maxd[i]-d) > int64(left) {
			i = int(tr.next[i])
			continue
		}
		at[d] = t
		if c <= left {
			for _, id := range tr.ids[tr.lo[i]:tr.hi[i]] {
				mk[id>>5] |= 1 << (id & 31)
				any = true
			}
		}
		i++
	}
	return any
}

// costliestAfter is the most that completing the grammar costs after any
// one token from s (a walk of the whole trie; dead prefixes pruned).
func (m *Matcher) costliestAfter(s int32) int32 {
	tr := &m.v.trie
	at := m.stateAt
	at[0] = s
	most := int32(0)
	for i := 0; i < len(tr.b); {
		d := tr.depth[i]
		t := m.step(at[d-1], tr.b[i])
		if t == 0 {
			i = int(tr.next[i])
			continue
		}
		at[d] = t
		if tr.hi[i] > tr.lo[i] {
			c, _ := m.stateCost(t)
			most = max(most, c)
		}
		i++
	}
	return most
}
