package grammar

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
	// the same for every token's bytes after its first: for a state
	// whose first bytes lead into the loop
	allIn1 []int32
	exits1 []trie
}

// neighbourhood is s's loop table (local index, exitByte or deadByte for
// each of 256 bytes per local state) and the local states, or nil when s
// is not a loop worth it.
func (m *Matcher) neighbourhood(s int32) ([]int8, []int32) {
	m.row(s)
	loops := 0
	for _, t := range m.succ(s)[:0x80] {
		if t == s {
			loops++
		}
	}
	if loops < minLoopBytes {
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

// loop is the vocabulary's data for a neighbourhood table, computed on
// first use; nil when the Vocab already keeps maxLoops tables.
func (v *Vocab) loop(tab []int8, nLocal int) *loopData {
	key := string(unsafeBytes(tab))
	v.mu.Lock()
	defer v.mu.Unlock()
	if d, ok := v.loops[key]; ok {
		return d
	}
	if len(v.loops) >= maxLoops {
		return nil
	}
	d := &loopData{allIn: make([]uint32, (v.n+31)/32), exits: make([]trie, nLocal), exits1: make([]trie, nLocal)}
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
			d.allIn1 = append(d.allIn1, id)
		}
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
	if tab, locals := m.neighbourhood(s); tab != nil {
		if d := m.v.loop(tab, len(locals)); d != nil {
			copy(mk, d.allIn)
			for j := range d.exits {
				if len(d.exits[j].b) > 0 {
					m.walk(&d.exits[j], locals[j], mk, nil, 0, len(d.exits[j].b))
				}
			}
			return
		}
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
			if tab, locals := m.neighbourhood(t); tab != nil {
				if d := v.loop(tab, len(locals)); d != nil {
					for _, id := range d.allIn1 {
						if first.has(v.pieces[id][0]) {
							mk[id>>5] |= 1 << (id & 31)
						}
					}
					for j := range d.exits1 {
						if len(d.exits1[j].b) > 0 {
							m.walk(&d.exits1[j], locals[j], mk, &first, 0, len(d.exits1[j].b))
						}
					}
					continue
				}
			}
		}
		for _, r := range v.rootChildren {
			if first.has(v.trie.b[r]) {
				m.walk(&v.trie, s, mk, nil, int(r), int(v.trie.next[r]))
			}
		}
	}
}

func unsafeBytes(b []int8) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		out[i] = byte(c)
	}
	return out
}
