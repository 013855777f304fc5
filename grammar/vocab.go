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

// MaxTokenBytes caps the piece length the trie holds; longer text tokens
// are never allowed (none exist in real vocabularies).
const MaxTokenBytes = 1024

// trie holds byte strings depth-first: node i consumes b[i] at depth
// depth[i] (1-based), its subtree ends before next[i], and the tokens
// ending there are ids[lo[i]:hi[i]].
type trie struct {
	b        []byte
	depth    []uint16
	next     []int32
	lo, hi   []int32
	ids      []int32
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
			open = append(open, int32(len(t.b)))
			t.b = append(t.b, p[d])
			t.depth = append(t.depth, uint16(d+1))
			t.next = append(t.next, 0)
			t.lo = append(t.lo, 0)
			t.hi = append(t.hi, 0)
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
	return t
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
}

// NewVocab prepares pieces (each token's bytes, indexed by id) with their
// kinds (nil: every token is TokenText; an empty text piece is never
// allowed). The pieces are copied.
func NewVocab(pieces [][]byte, kinds []TokenKind) (*Vocab, error) {
	if kinds != nil && len(kinds) != len(pieces) {
		return nil, errorf("grammar: %d kinds for %d pieces", len(kinds), len(pieces))
	}
	v := &Vocab{n: len(pieces), pieces: make([][]byte, len(pieces)), kinds: make([]TokenKind, len(pieces)), loops: map[string]*loopData{}}
	var entries []trieEntry
	for id, p := range pieces {
		v.pieces[id] = bytes.Clone(p)
		k := TokenText
		if kinds != nil {
			k = kinds[id]
		}
		if k == TokenText && (len(p) == 0 || len(p) > MaxTokenBytes) {
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

// Size is the number of tokens.
func (v *Vocab) Size() int { return v.n }

// TrieNodes is the number of trie nodes (a mask's worst-case work).
func (v *Vocab) TrieNodes() int { return len(v.trie.b) }

// Piece is token id's bytes; the caller must not modify them.
func (v *Vocab) Piece(id int32) []byte { return v.pieces[id] }
