package grammar

import (
	"encoding/binary"
	"math/bits"
	"slices"
	"unsafe"
)

// Matcher caps; past them a stack or state is a dead end (MaxStackDepth,
// MaxStacks) or the memo tables are flushed between tokens.
const (
	// MaxStackDepth is the deepest rule nesting a stack may reach
	// (nested JSON arrays and objects count one or two levels each).
	maxStackDepth = 2048
	// maxStacks is the most stacks one state may hold (ambiguity).
	maxStacks = 1 << 12
	// flush thresholds: ~12 MiB of stack nodes (and their index), 32 MiB
	// of successor rows, 32 MiB of cached masks, so that a matcher fits a
	// plugin's memory
	maxNodes  = 1 << 19
	maxStates = 1 << 15
	// maxMaskBytes bounds the cached masks of one matcher.
	maxMaskBytes = 32 << 20
)

type snode struct{ pos, parent, depth int32 }

// Matcher follows one generation through a grammar for a vocabulary. It
// is not safe for concurrent use; make one per generation (NewMatcher is
// cheap: its tables fill as states are met). Matchers of one grammar may
// run on different goroutines: the masks they share are synchronized.
type Matcher struct {
	g *Grammar
	v *Vocab
	// the masks of g's matchers over v (nil: none shared)
	shared *sharedMasks
	skey   []byte
	sseqs  [][]int32
	sflat  []int32

	nodes    []snode // node 0 is the empty stack (the grammar may end)
	nodeIdx  map[[2]int32]int32
	states   [][]int32 // sorted node ids; state 0 is dead (no stack)
	stateIdx map[string]int32
	pages    [][]int32 // 256 successors (-1 unknown) for each of pageStates states a page
	rowDone  []bool    // all 256 successors known
	lazy     []uint8   // successors computed one byte at a time
	masks    [][]uint32
	maskMem  int

	start, cur int32
	done       bool

	// per state: its counter abstraction (counter.go; -1 not yet known)
	// and the subtrees a walk may take whole from it (skipInfo)
	canon, canonL []int32
	skipDone      []bool
	skipGood      []*goodTable
	skipH         []int32
	loopDone      []bool
	loopAt        []*loopInfo
	shapes        map[string]*goodTable // goodOfState by shapeKey
	heights       map[int32][]int32     // shape heights met, by first top position
	mark          []uint32              // localFloor's scratch, by node
	markGen       uint32
	seqs          [][]int32
	// per node: its counter abstraction and least replaced level
	cnode, cmin []int32
	// per node: the fewest bytes that end the grammar (-1 not yet known)
	ncost []int32
	// per state: the costliest completion after one token (budget.go)
	maxAfter map[int32]int32

	visited stampSet
	visits  int // trie nodes stepped, for tests
	// a stack passed MaxStackDepth or a state MaxStacks since last cleared
	// (intersect.go refuses an automaton that would lose strings so)
	capped  bool
	out     []int32
	key     []byte
	scratch []int32
	tmpMask []uint32
	stateAt []int32
	goodAt  [][]uint64
	baseAt  []int32
	hAt     []int32
}

// NewMatcher starts a match of g over v at the grammar's beginning. The
// matchers of one g and v share the masks they compute (see
// MaxSharedMaskBytes), so a new matcher is cheap to make and its masks
// of states that an earlier one met cost a lookup.
func NewMatcher(g *Grammar, v *Vocab) *Matcher {
	m := newMatcher(g, v)
	m.shared = g.shared(v)
	return m
}

// newMatcher is a matcher that shares no masks.
func newMatcher(g *Grammar, v *Vocab) *Matcher {
	d := v.trie.maxDepth + 1
	m := &Matcher{g: g, v: v, stateAt: make([]int32, d), goodAt: make([][]uint64, d), baseAt: make([]int32, d), hAt: make([]int32, d)}
	m.reset()
	m.start = m.closure(func() {
		for _, a := range g.rules[g.root] {
			m.expand(a, 0)
		}
	})
	m.cur = m.start
	return m
}

func (m *Matcher) reset() {
	m.nodes = append(m.nodes[:0], snode{pos: -1})
	m.nodeIdx = map[[2]int32]int32{}
	m.states = [][]int32{nil}
	m.stateIdx = map[string]int32{"": 0}
	m.pages = m.pages[:0]
	m.rowDone = append(m.rowDone[:0], true)
	m.lazy = append(m.lazy[:0], 0)
	m.newPage()
	clear(m.pages[0][:256]) // the dead state stays dead
	m.masks = [][]uint32{nil}
	m.maskMem = 0
	m.canon, m.canonL = append(m.canon[:0], 0), append(m.canonL[:0], noLevel)
	m.skipDone, m.skipGood, m.skipH = append(m.skipDone[:0], true), append(m.skipGood[:0], nil), append(m.skipH[:0], 0)
	m.loopDone, m.loopAt = append(m.loopDone[:0], true), append(m.loopAt[:0], nil)
	m.shapes, m.heights = map[string]*goodTable{}, map[int32][]int32{}
	m.mark = m.mark[:0]
	m.cnode, m.cmin = m.cnode[:0], m.cmin[:0]
	m.ncost = m.ncost[:0]
	m.maxAfter = map[int32]int32{}
}

// Reset goes back to the grammar's beginning, keeping the memo tables.
func (m *Matcher) Reset() { m.cur, m.done = m.start, false }

func (m *Matcher) node(pos, parent int32) int32 {
	k := [2]int32{pos, parent}
	if id, ok := m.nodeIdx[k]; ok {
		return id
	}
	d := m.nodes[parent].depth + 1
	if d > maxStackDepth {
		m.capped = true
		return -1
	}
	id := int32(len(m.nodes))
	m.nodes = append(m.nodes, snode{pos, parent, d})
	m.nodeIdx[k] = id
	return id
}

// expand adds to m.out every stack reached from matching position pos
// with continuation parent, stopping at terminals.
func (m *Matcher) expand(pos, parent int32) {
	if !m.visited.add(uint64(uint32(pos))<<32 | uint64(uint32(parent))) {
		return
	}
	switch e := m.g.elems[pos]; e.kind {
	case eTerm:
		if id := m.node(pos, parent); id > 0 {
			m.out = append(m.out, id)
		}
	case eEnd:
		if parent == 0 {
			m.out = append(m.out, 0)
			return
		}
		p := m.nodes[parent]
		m.expand(p.pos, p.parent)
	case eRef:
		cont := parent
		if m.g.elems[pos+1].kind != eEnd {
			if cont = m.node(pos+1, parent); cont < 0 {
				return
			}
		}
		for _, a := range m.g.rules[e.arg] {
			m.expand(a, cont)
		}
	}
}

// closure runs fill with empty scratch and interns the stacks it found.
func (m *Matcher) closure(fill func()) int32 {
	m.out = m.out[:0]
	m.visited.clear()
	fill()
	if len(m.out) > maxStacks {
		m.capped = true
		return 0
	}
	slices.Sort(m.out)
	m.out = slices.Compact(m.out)
	m.key = m.key[:0]
	for _, id := range m.out {
		m.key = binary.LittleEndian.AppendUint32(m.key, uint32(id))
	}
	if s, ok := m.stateIdx[unsafe.String(unsafe.SliceData(m.key), len(m.key))]; ok {
		return s
	}
	s := int32(len(m.states))
	m.states = append(m.states, slices.Clone(m.out))
	m.stateIdx[string(m.key)] = s
	if int(s)>>pageShift >= len(m.pages) {
		m.newPage()
	}
	m.rowDone = append(m.rowDone, false)
	m.lazy = append(m.lazy, 0)
	m.masks = append(m.masks, nil)
	m.canon, m.canonL = append(m.canon, -1), append(m.canonL, noLevel)
	m.skipDone, m.skipGood, m.skipH = append(m.skipDone, false), append(m.skipGood, nil), append(m.skipH, 0)
	m.loopDone, m.loopAt = append(m.loopDone, false), append(m.loopAt, nil)
	return s
}

const (
	pageShift  = 6
	pageStates = 1 << pageShift
	// lazyBytes: successors computed one at a time before a state's whole
	// row is (most states met in a walk are stepped by one or two bytes).
	lazyBytes = 4
)

func (m *Matcher) newPage() {
	p := make([]int32, pageStates<<8)
	for i := range p {
		p[i] = -1
	}
	m.pages = append(m.pages, p)
}

// succ is state s's successor row.
func (m *Matcher) succ(s int32) []int32 {
	off := int(s&(pageStates-1)) << 8
	return m.pages[s>>pageShift][off : off+256 : off+256]
}

// step is the state after byte b from state s (0: dead).
func (m *Matcher) step(s int32, b byte) int32 {
	if t := m.succ(s)[b]; t >= 0 {
		return t
	}
	if !m.rowDone[s] && m.lazy[s] < lazyBytes {
		m.lazy[s]++
		stacks := m.states[s]
		t := m.closure(func() { m.advance(stacks, b) })
		m.succ(s)[b] = t
		return t
	}
	m.row(s)
	return m.succ(s)[b]
}

// row computes all 256 successors of s: bytes that the same stacks
// match share one closure.
func (m *Matcher) row(s int32) {
	if m.rowDone[s] {
		return
	}
	m.rowDone[s] = true
	stacks := m.states[s]
	if len(stacks) > 64 {
		for b := range 256 {
			t := m.closure(func() { m.advance(stacks, byte(b)) })
			m.succ(s)[b] = t
		}
		return
	}
	var sig [256]uint64
	for i, id := range stacks {
		if id == 0 {
			continue
		}
		set := &m.g.sets[m.g.elems[m.nodes[id].pos].arg]
		for w, word := range set {
			for word != 0 {
				b := w<<6 | bitsTrailing(word)
				word &= word - 1
				sig[b] |= 1 << i
			}
		}
	}
	type class struct {
		sig uint64
		t   int32
	}
	classes := []class{{0, 0}}
	for b := range 256 {
		t := int32(-1)
		for _, c := range classes {
			if c.sig == sig[b] {
				t = c.t
				break
			}
		}
		if t < 0 {
			t = m.closure(func() { m.advance(stacks, byte(b)) })
			classes = append(classes, class{sig[b], t})
		}
		m.succ(s)[b] = t
	}
}

// advance expands every stack of stacks whose terminal matches b.
func (m *Matcher) advance(stacks []int32, b byte) {
	for _, id := range stacks {
		if id == 0 {
			continue
		}
		n := m.nodes[id]
		if m.g.sets[m.g.elems[n.pos].arg].has(b) {
			m.expand(n.pos+1, n.parent)
		}
	}
}

func (m *Matcher) accepting(s int32) bool {
	st := m.states[s]
	return len(st) > 0 && st[0] == 0
}

// Done reports whether the grammar may end here (an end-of-generation
// token is allowed), or has ended (one was accepted).
func (m *Matcher) Done() bool { return m.done || m.accepting(m.cur) }

// Mask is the allowed-token bitmask at the current position:
// ceil(n/32) little-endian-ordered u32 words, bit id%32 of word id/32 set
// when token id is allowed. End-of-generation tokens are allowed where the
// grammar may end; after one was accepted nothing is.
//
// # Notes
//
// The mask is a cached copy for this state, shared with the other
// matchers of the grammar (shared.go): the caller must not modify it. It
// is never modified after it is returned, so it stays valid as long as
// the caller keeps it.
func (m *Matcher) Mask() []uint32 {
	s := m.cur
	if m.done {
		s = 0
	}
	return m.maskOf(s)
}

// maskOf is state s's mask, computed on first use (unless another
// matcher of the grammar has: shared.go): from its counter abstraction
// when it has one (counter.go), else by fill.
func (m *Matcher) maskOf(s int32) []uint32 {
	if mk := m.masks[s]; mk != nil {
		return mk
	}
	var key string
	if m.shared != nil && s != 0 && m.sharedKey(s) {
		if mk := m.shared.get(m.skey); mk != nil {
			m.masks[s] = mk
			m.maskMem += 4*len(mk) + 64
			return mk
		}
		key = string(m.skey)
	}
	mk := make([]uint32, (m.v.n+31)/32)
	if s != 0 {
		if c, l := m.canonical(s); c != s {
			m.counterMask(s, c, l, mk)
		} else {
			m.fill(s, mk)
		}
		if m.accepting(s) {
			for _, id := range m.v.eog {
				mk[id>>5] |= 1 << (id & 31)
			}
		}
		if key != "" {
			mk = m.shared.put(key, mk)
		}
	}
	m.masks[s] = mk
	m.maskMem += 4*len(mk) + 64
	return mk
}

// minSkipNodes: a walk asks whether it may take subtrees whole (skipInfo)
// below a node with at least this many nodes in its subtree (a variable
// for tests, which take every subtree they can).
var minSkipNodes int32 = 32

// walk sets the bit of every token of tr whose bytes the grammar accepts
// from state s, skipping the subtree of every refused prefix. On the
// vocabulary's trie, below a state whose skipInfo has good subtrees, a
// good subtree's tokens are all set without stepping it.
//
// It walks nodes [from, to) (whole subtrees); with first, only tokens
// whose first byte is in first are set; with minLen > 0, only tokens of
// at least minLen bytes are (and shorter subtrees are not walked).
func (m *Matcher) walk(tr *trie, s int32, mk []uint32, first *byteSet, from, to, minLen int) {
	at, goodAt, baseAt, hAt := m.stateAt, m.goodAt, m.baseAt, m.hAt
	at[0] = s
	skip := tr == &m.v.trie && minLen == 0
	var gt0 *goodTable
	goodAt[0] = nil
	if skip {
		gt0, hAt[0] = m.skipInfo(s)
	}
	rc := int32(0) // the depth-1 node above i
	tb, depth, next, lo, hi, ids, sub, maxd := tr.b[:to], tr.depth, tr.next, tr.lo, tr.hi, tr.ids, tr.sub, tr.maxd
	for i := from; i < len(tb); {
		d := depth[i]
		if int(maxd[i]) < minLen {
			i = int(next[i])
			continue
		}
		if d == 1 {
			rc = int32(i)
			if gt0 != nil {
				goodAt[0], baseAt[0] = m.v.goodPart(gt0, rc), rc
			}
		}
		if g := goodAt[d-1]; skip && g != nil {
			if k := int32(i) - baseAt[d-1]; g[k>>6]>>(k&63)&1 != 0 && int32(maxd[i]-d) < hAt[d-1] {
				for _, id := range ids[sub[i]:sub[next[i]]] {
					if first == nil || first.has(m.v.pieces[id][0]) {
						mk[id>>5] |= 1 << (id & 31)
					}
				}
				i = int(next[i])
				continue
			}
		}
		ps := at[d-1]
		t := m.pages[ps>>pageShift][int(ps&(pageStates-1))<<8|int(tb[i])]
		if t < 0 {
			t = m.step(ps, tb[i])
		}
		if t == 0 {
			i = int(next[i])
			continue
		}
		m.visits++
		at[d] = t
		if skip {
			goodAt[d] = nil
			if next[i]-int32(i) >= minSkipNodes {
				if gt, h := m.skipInfo(t); gt != nil {
					goodAt[d], baseAt[d], hAt[d] = m.v.goodPart(gt, rc), rc, h
				}
			}
		}
		if int(d) >= minLen {
			for _, id := range ids[lo[i]:hi[i]] {
				if first == nil || first.has(m.v.pieces[id][0]) {
					mk[id>>5] |= 1 << (id & 31)
				}
			}
		}
		i++
	}
}

// Accept advances past token id. A token the grammar does not allow here
// is ErrRejected and leaves the matcher where it was.
func (m *Matcher) Accept(id int32) error {
	if id < 0 || int(id) >= m.v.n {
		return errorf("%w: token %d is outside the vocabulary", ErrRejected, id)
	}
	if m.done {
		return errorf("%w: token %d after the end", ErrRejected, id)
	}
	switch m.v.kinds[id] {
	case TokenEOG:
		if !m.accepting(m.cur) {
			return errorf("%w: end of generation before the grammar ends", ErrRejected)
		}
		m.done = true
		return nil
	case TokenOther:
		return errorf("%w: token %d is not text", ErrRejected, id)
	}
	s := m.cur
	for _, b := range m.v.pieces[id] {
		if s = m.step(s, b); s == 0 {
			return errorf("%w: token %d (%q)", ErrRejected, id, m.v.pieces[id])
		}
	}
	m.cur = s
	m.maybeFlush()
	return nil
}

// AcceptBytes advances past text that is not a whole token (a prompt's
// prefill, a test); ErrRejected leaves the matcher where it was.
func (m *Matcher) AcceptBytes(text []byte) error {
	s := m.cur
	for i, b := range text {
		if s = m.step(s, b); s == 0 {
			return errorf("%w: byte %d of %q", ErrRejected, i, text)
		}
	}
	m.cur = s
	m.maybeFlush()
	return nil
}

// maybeFlush empties the memo tables when they pass their caps, keeping
// the current state (re-interned from its stacks' positions).
func (m *Matcher) maybeFlush() {
	if len(m.nodes) < maxNodes && len(m.states) < maxStates && m.maskMem < maxMaskBytes {
		return
	}
	var stacks [][]int32
	for _, id := range m.states[m.cur] {
		var st []int32
		for ; id != 0; id = m.nodes[id].parent {
			st = append(st, m.nodes[id].pos)
		}
		stacks = append(stacks, st)
	}
	startStacks := m.states[m.start]
	var starts [][]int32
	for _, id := range startStacks {
		var st []int32
		for ; id != 0; id = m.nodes[id].parent {
			st = append(st, m.nodes[id].pos)
		}
		starts = append(starts, st)
	}
	m.reset()
	rebuild := func(stacks [][]int32) int32 {
		return m.closure(func() {
			for _, st := range stacks {
				parent := int32(0)
				for i := len(st) - 1; i >= 0; i-- {
					parent = m.node(st[i], parent)
				}
				m.out = append(m.out, parent)
			}
		})
	}
	m.start = rebuild(starts)
	m.cur = rebuild(stacks)
}

func bitsTrailing(w uint64) int { return bits.TrailingZeros64(w) }
