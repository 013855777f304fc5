package grammar

import (
	"bytes"
	"slices"
	"sync"
)

// TokenKind says how the matcher treats a token.
type TokenKind uint8

const (
	// TokenText is matched by its bytes.
	TokenText TokenKind = iota
	// TokenEOG ends generation: allowed exactly where the grammar may end.
	TokenEOG
	// TokenOther (control, unknown, empty) is never allowed.
	TokenOther
)

// maxTokenBytes caps the piece length the trie holds; longer text tokens
// are never allowed (none exist in real vocabularies).
const maxTokenBytes = 1024

// trie holds byte strings depth-first: node i consumes b[i] at depth
// depth[i] (1-based), its subtree ends before next[i], and the tokens
// ending there are ids[lo[i]:hi[i]]. The tokens of its whole subtree are
// ids[sub[i]:sub[next[i]]] (sub has one entry more than b), the deepest
// of them ends at depth maxd[i], and parent[i] is its parent (-1 at
// depth 1).
type trie struct {
	b        []byte
	depth    []uint16
	next     []int32
	lo, hi   []int32
	ids      []int32
	sub      []int32
	maxd     []uint16
	parent   []int32
	maxDepth int
}

type trieEntry struct {
	key []byte
	id  int32
}

// buildTrie lays out entries (sorted here, by key then id).
func buildTrie(entries []trieEntry) trie {
	slices.SortFunc(entries, func(a, b trieEntry) int {
		if c := bytes.Compare(a.key, b.key); c != 0 {
			return c
		}
		return int(a.id - b.id)
	})
	var t trie
	var open []int32
	var prev []byte
	for i, e := range entries {
		p := e.key
		if i > 0 && bytes.Equal(p, prev) {
			t.hi[open[len(open)-1]]++
			t.ids = append(t.ids, e.id)
			continue
		}
		lcp := 0
		for lcp < len(prev) && lcp < len(p) && prev[lcp] == p[lcp] {
			lcp++
		}
		for len(open) > lcp {
			t.next[open[len(open)-1]] = int32(len(t.b))
			open = open[:len(open)-1]
		}
		for d := lcp; d < len(p); d++ {
			par := int32(-1)
			if len(open) > 0 {
				par = open[len(open)-1]
			}
			open = append(open, int32(len(t.b)))
			t.b = append(t.b, p[d])
			t.depth = append(t.depth, uint16(d+1))
			t.next = append(t.next, 0)
			t.lo = append(t.lo, 0)
			t.hi = append(t.hi, 0)
			t.sub = append(t.sub, int32(len(t.ids)))
			t.parent = append(t.parent, par)
		}
		last := open[len(open)-1]
		t.lo[last] = int32(len(t.ids))
		t.hi[last] = int32(len(t.ids)) + 1
		t.ids = append(t.ids, e.id)
		t.maxDepth = max(t.maxDepth, len(p))
		prev = p
	}
	for _, o := range open {
		t.next[o] = int32(len(t.b))
	}
	t.sub = append(t.sub, int32(len(t.ids)))
	t.maxd = slices.Clone(t.depth)
	for i := len(t.b) - 1; i >= 0; i-- {
		if p := t.parent[i]; p >= 0 {
			t.maxd[p] = max(t.maxd[p], t.maxd[i])
		}
	}
	return t
}

// goodTable is, for a neighbourhood table (nLocal states of 256 entries:
// a local state, exitByte or deadByte), the vocabulary trie's nodes
// whose whole subtree, read from local state 0, stays among the table's
// states: one bitset per depth-1 subtree (bit i-r of part r for node i),
// each computed on first use (under Vocab.mu).
type goodTable struct {
	tab    []int8
	nLocal int
	parts  map[int32][]uint64
}

// goodRange computes gt's part for the depth-1 subtree rooted at r.
func (t *trie) goodRange(gt *goodTable, r int32) []uint64 {
	from, to := int(r), int(t.next[r])
	good := make([]uint64, (to-from+63)/64)
	// childOk[i-from]: the local states from which every child subtree
	// of i stays inside
	childOk := make([]uint32, to-from)
	for i := range childOk {
		childOk[i] = ^uint32(0)
	}
	tab := gt.tab
	for i := to - 1; i >= from; i-- {
		b, co, ok := int(t.b[i]), childOk[i-from], uint32(0)
		for j := range gt.nLocal {
			if c := tab[j<<8|b]; c >= 0 && co>>uint(c)&1 != 0 {
				ok |= 1 << j
			}
		}
		if ok&1 != 0 {
			k := i - from
			good[k>>6] |= 1 << (k & 63)
		}
		if p := int(t.parent[i]); p >= from {
			childOk[p-from] &= ok
		}
	}
	return good
}

// Vocab is a vocabulary prepared for masking: the text tokens' bytes in a
// trie stored in depth-first order, so a mask is one pass over arrays. It
// is built once per vocabulary and safe to share between goroutines.
type Vocab struct {
	n      int
	pieces [][]byte
	kinds  []TokenKind
	eog    []int32
	text   []int32
	trie   trie
	// rootChildren are the trie's depth-1 nodes; firstCount[b] counts the
	// text tokens whose first byte is b
	rootChildren []int32
	firstCount   [256]int

	mu    sync.Mutex
	loops map[string]*loopData
	goods map[string]*goodTable // per neighbourhood table
	short [][]uint32            // short[l]: the text tokens of at most l bytes
}

// NewVocab prepares pieces (each token's bytes, indexed by id) with their
// kinds (nil: every token is TokenText; an empty text piece is never
// allowed). The pieces are copied.
func NewVocab(pieces [][]byte, kinds []TokenKind) (*Vocab, error) {
	if kinds != nil && len(kinds) != len(pieces) {
		return nil, errorf("grammar: %d kinds for %d pieces", len(kinds), len(pieces))
	}
	v := &Vocab{n: len(pieces), pieces: make([][]byte, len(pieces)), kinds: make([]TokenKind, len(pieces)), loops: map[string]*loopData{}, goods: map[string]*goodTable{}}
	var entries []trieEntry
	for id, p := range pieces {
		v.pieces[id] = bytes.Clone(p)
		k := TokenText
		if kinds != nil {
			k = kinds[id]
		}
		if k == TokenText && (len(p) == 0 || len(p) > maxTokenBytes) {
			k = TokenOther
		}
		v.kinds[id] = k
		switch k {
		case TokenText:
			v.text = append(v.text, int32(id))
			entries = append(entries, trieEntry{v.pieces[id], int32(id)})
		case TokenEOG:
			v.eog = append(v.eog, int32(id))
		}
	}
	v.trie = buildTrie(entries)
	for i, d := range v.trie.depth {
		if d == 1 {
			v.rootChildren = append(v.rootChildren, int32(i))
		}
	}
	for _, id := range v.text {
		v.firstCount[v.pieces[id][0]]++
	}
	return v, nil
}

// goodTable is the goodTable of a neighbourhood table (key is its bytes);
// nil when the Vocab keeps maxGoods of them.
func (v *Vocab) goodTable(key string, tab []int8, nLocal int) *goodTable {
	v.mu.Lock()
	defer v.mu.Unlock()
	if g, ok := v.goods[key]; ok {
		return g
	}
	if len(v.goods) >= maxGoods {
		return nil
	}
	g := &goodTable{tab: tab, nLocal: nLocal, parts: map[int32][]uint64{}}
	v.goods[key] = g
	return g
}

// goodPart is gt's bitset for the depth-1 subtree rooted at r.
func (v *Vocab) goodPart(gt *goodTable, r int32) []uint64 {
	v.mu.Lock()
	defer v.mu.Unlock()
	p, ok := gt.parts[r]
	if !ok {
		p = v.trie.goodRange(gt, r)
		gt.parts[r] = p
	}
	return p
}

// shortMask is the bitmask of the text tokens of at most l bytes
// (l < trie.maxDepth), computed on first use.
func (v *Vocab) shortMask(l int) []uint32 {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.short == nil {
		v.short = make([][]uint32, v.trie.maxDepth+1)
	}
	if v.short[l] == nil {
		mk := make([]uint32, (v.n+31)/32)
		for _, id := range v.text {
			if len(v.pieces[id]) <= l {
				mk[id>>5] |= 1 << (id & 31)
			}
		}
		v.short[l] = mk
	}
	return v.short[l]
}

// maxGoods bounds the neighbourhood tables whose goodTable a Vocab keeps
// (at most 34 KiB each, at 274k trie nodes).
const maxGoods = 1024

// Size is the number of tokens.
func (v *Vocab) Size() int { return v.n }

// TrieNodes is the number of trie nodes (a mask's worst-case work).
func (v *Vocab) TrieNodes() int { return len(v.trie.b) }

// Piece is token id's bytes; the caller must not modify them.
func (v *Vocab) Piece(id int32) []byte { return v.pieces[id] }
