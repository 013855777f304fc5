package grammar

import (
	"math/bits"
	"slices"
)

// A state inside a string or another character loop allows most of the
// vocabulary, and a trie walk from it visits almost every node. Such a
// state's neighbourhood — the state itself and the states its UTF-8 lead
// and continuation bytes reach — is a small automaton whose transition
// table does not depend on what follows the loop (the continuation is
// reached only through the bytes that leave it). The vocabulary keeps,
// per distinct table, the tokens that stay inside it (one precomputed
// bitmask) and a trie of the suffixes of the rest from where they leave;
// a mask is then a copy of that bitmask and a walk of the suffix tries.

const (
	maxLocal = 32 // states of a loop neighbourhood
	// minLoopBytes: the ASCII bytes that must return to the state for the
	// loop path to pay off.
	minLoopBytes = 32
	maxLoops     = 256 // neighbourhood tables a Vocab keeps
	exitByte     = -1  // leaves the neighbourhood
	deadByte     = -2  // no successor
)

type loopData struct {
	allIn []uint32 // tokens that end inside the neighbourhood
	exits []trie   // per local state, the suffixes of tokens leaving from it
	// the same for every token's bytes after its first, for a state whose
	// first bytes lead into the loop: a bitmask, and its tokens by first
	// byte (allIn1By[allIn1At[b]:allIn1At[b+1]])
	allIn1   []uint32
	allIn1By []int32
	allIn1At [257]int32
	exits1   []trie
}

// loopInfo is a state's neighbourhood: its table, local states and table
// key, the table's loop data (loopOf) and its good trie nodes (goodOf),
// each computed on first use.
type loopInfo struct {
	tab    []int8
	locals []int32
	key    string
	d      *loopData
	dDone  bool
	good   *goodTable
}

// loopOf is s's neighbourhood (nil when s is none), computed once per
// state.
func (m *Matcher) loopOf(s int32) *loopInfo {
	if m.loopDone[s] {
		return m.loopAt[s]
	}
	var li *loopInfo
	if tab, locals := m.neighbourhood(s); tab != nil {
		li = &loopInfo{tab: tab, locals: locals, key: string(unsafeBytes(tab))}
	}
	m.loopDone[s], m.loopAt[s] = true, li
	return li
}

// data is li's loop data (nil when the Vocab keeps maxLoops tables).
func (li *loopInfo) data(v *Vocab) *loopData {
	if !li.dDone {
		li.d, li.dDone = v.loop(li.key, li.tab, len(li.locals)), true
	}
	return li.d
}

// goodOf is li's goodTable (nil when the Vocab keeps maxGoods).
func (li *loopInfo) goodOf(v *Vocab) *goodTable {
	if li.good == nil {
		li.good = v.goodTable(li.key, li.tab, len(li.locals))
	}
	return li.good
}

// neighbourhood is s's loop table (local index, exitByte or deadByte for
// each of 256 bytes per local state) and the local states, or nil when s
// is neither a loop worth it nor inside a character (no ASCII byte
// follows, and some byte from 0x80 does: the states it leads to through
// such bytes are the table's, up to the loop after the character).
func (m *Matcher) neighbourhood(s int32) ([]int8, []int32) {
	// the bytes some stack's terminal takes: a loop needs minLoopBytes
	// ASCII ones, a state inside a character none
	var any byteSet
	for _, id := range m.states[s] {
		if id != 0 {
			set := &m.g.sets[m.g.elems[m.nodes[id].pos].arg]
			for w := range any {
				any[w] |= set[w]
			}
		}
	}
	if n := bits.OnesCount64(any[0]) + bits.OnesCount64(any[1]); n > 0 && n < minLoopBytes {
		return nil, nil
	}
	m.row(s)
	loops, live := 0, 0
	for _, t := range m.succ(s)[:0x80] {
		if t == s {
			loops++
		}
		if t != 0 {
			live++
		}
	}
	if loops < minLoopBytes && live > 0 {
		return nil, nil
	}
	if live == 0 && !slices.ContainsFunc(m.succ(s)[0x80:], func(t int32) bool { return t > 0 }) {
		return nil, nil
	}
	locals := []int32{s}
	tab := make([]int8, 0, 256*maxLocal)
	for j := 0; j < len(locals); j++ {
		u := locals[j]
		m.row(u)
		for b := range 256 {
			t := m.succ(u)[b]
			code := int8(exitByte)
			switch {
			case t == 0:
				code = deadByte
			default:
				found := false
				for k, l := range locals {
					if l == t {
						code, found = int8(k), true
						break
					}
				}
				if !found && b >= 0x80 && len(locals) < maxLocal {
					code = int8(len(locals))
					locals = append(locals, t)
				}
			}
			tab = append(tab, code)
		}
	}
	return tab, locals
}

// loop is the vocabulary's data for a neighbourhood table (key is the
// table's bytes), computed on first use; nil when the Vocab already keeps
// maxLoops tables.
func (v *Vocab) loop(key string, tab []int8, nLocal int) *loopData {
	v.mu.Lock()
	defer v.mu.Unlock()
	if d, ok := v.loops[key]; ok {
		return d
	}
	if len(v.loops) >= maxLoops {
		return nil
	}
	d := &loopData{allIn: make([]uint32, (v.n+31)/32), allIn1: make([]uint32, (v.n+31)/32), exits: make([]trie, nLocal), exits1: make([]trie, nLocal)}
	entries := make([][]trieEntry, nLocal)
	entries1 := make([][]trieEntry, nLocal)
	// run reports whether p stays inside, adding its exit suffix to ent
	run := func(p []byte, id int32, ent [][]trieEntry) bool {
		j := 0
		for k, b := range p {
			c := tab[j<<8|int(b)]
			if c == deadByte {
				return false
			}
			if c == exitByte {
				ent[j] = append(ent[j], trieEntry{p[k:], id})
				return false
			}
			j = int(c)
		}
		return true
	}
	for _, id := range v.text {
		p := v.pieces[id]
		if run(p, id, entries) {
			d.allIn[id>>5] |= 1 << (id & 31)
		}
		if run(p[1:], id, entries1) {
			d.allIn1[id>>5] |= 1 << (id & 31)
			d.allIn1By = append(d.allIn1By, id)
		}
	}
	slices.SortStableFunc(d.allIn1By, func(a, b int32) int { return int(v.pieces[a][0]) - int(v.pieces[b][0]) })
	for _, id := range d.allIn1By {
		d.allIn1At[int(v.pieces[id][0])+1]++
	}
	for b := range 256 {
		d.allIn1At[b+1] += d.allIn1At[b]
	}
	for j := range entries {
		d.exits[j] = buildTrie(entries[j])
		d.exits1[j] = buildTrie(entries1[j])
	}
	v.loops[key] = d
	return d
}

// minShiftTokens: fewer tokens than this behind a group of first bytes
// are walked plainly.
const minShiftTokens = 4096

// fill computes state s's mask into mk (zeroed): through s's loop when s
// is one; otherwise first bytes are grouped by the state they lead to,
// and a group that leads into a loop takes the loop's data for the
// tokens' remaining bytes.
func (m *Matcher) fill(s int32, mk []uint32) {
	if li := m.loopOf(s); li != nil && li.data(m.v) != nil {
		d := li.d
		copy(mk, d.allIn)
		for j := range d.exits {
			if len(d.exits[j].b) > 0 {
				m.walk(&d.exits[j], li.locals[j], mk, nil, 0, len(d.exits[j].b), 0)
			}
		}
		return
	}
	v := m.v
	m.row(s)
	succ := m.succ(s)
	var groups []int32
	count := map[int32]int{}
	for b := range 256 {
		if t := succ[b]; t > 0 {
			if count[t] == 0 {
				groups = append(groups, t)
			}
			count[t] += v.firstCount[b]
		}
	}
	for _, t := range groups {
		var first byteSet
		for b := range 256 {
			if succ[b] == t {
				first.add(byte(b), byte(b))
			}
		}
		if count[t] >= minShiftTokens {
			if li := m.loopOf(t); li != nil && li.data(v) != nil {
				d := li.d
				m.orAllIn1(d, &first, mk)
				for j := range d.exits1 {
					if len(d.exits1[j].b) > 0 {
						m.walk(&d.exits1[j], li.locals[j], mk, &first, 0, len(d.exits1[j].b), 0)
					}
				}
				continue
			}
		}
		for _, r := range v.rootChildren {
			if first.has(v.trie.b[r]) {
				m.walk(&v.trie, s, mk, nil, int(r), int(v.trie.next[r]), 0)
			}
		}
	}
}

// orAllIn1 sets in mk d's allIn1 tokens whose first byte is in first.
func (m *Matcher) orAllIn1(d *loopData, first *byteSet, mk []uint32) {
	in := 0
	for b := range 256 {
		if first.has(byte(b)) {
			in += int(d.allIn1At[b+1] - d.allIn1At[b])
		}
	}
	if in < len(d.allIn1By)/2 {
		for b := range 256 {
			if first.has(byte(b)) {
				for _, id := range d.allIn1By[d.allIn1At[b]:d.allIn1At[b+1]] {
					mk[id>>5] |= 1 << (id & 31)
				}
			}
		}
		return
	}
	tmp := append(m.tmpMask[:0], d.allIn1...)
	m.tmpMask = tmp
	for b := range 256 {
		if !first.has(byte(b)) {
			for _, id := range d.allIn1By[d.allIn1At[b]:d.allIn1At[b+1]] {
				tmp[id>>5] &^= 1 << (id & 31)
			}
		}
	}
	for i, w := range tmp {
		mk[i] |= w
	}
}

func unsafeBytes(b []int8) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		out[i] = byte(c)
	}
	return out
}
