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
	d := &loopData{allIn: make([]uint32, (v.n+31)/32), exits: make([]trie, nLocal)}
	entries := make([][]trieEntry, nLocal)
	for _, id := range v.text {
		p := v.pieces[id]
		j := 0
		inside := true
		for k, b := range p {
			c := tab[j<<8|int(b)]
			if c == deadByte {
				inside = false
				break
			}
			if c == exitByte {
				entries[j] = append(entries[j], trieEntry{p[k:], id})
				inside = false
				break
			}
			j = int(c)
		}
		if inside {
			d.allIn[id>>5] |= 1 << (id & 31)
		}
	}
	for j := range entries {
		d.exits[j] = buildTrie(entries[j])
	}
	v.loops[key] = d
	return d
}

// fill computes state s's mask into mk (zeroed), through the loop path
// where it applies.
func (m *Matcher) fill(s int32, mk []uint32) {
	if tab, locals := m.neighbourhood(s); tab != nil {
		if d := m.v.loop(tab, len(locals)); d != nil {
			copy(mk, d.allIn)
			for j := range d.exits {
				if len(d.exits[j].b) > 0 {
					m.walk(&d.exits[j], locals[j], mk)
				}
			}
			return
		}
	}
	m.walk(&m.v.trie, s, mk)
}

func unsafeBytes(b []int8) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		out[i] = byte(c)
	}
	return out
}
