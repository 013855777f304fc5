package grammar

import (
	"bytes"
	"fmt"
	"slices"
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

// Vocab is a vocabulary prepared for masking: the text tokens' bytes in a
// trie stored in depth-first order, so a mask is one pass over arrays. It
// is built once per vocabulary, is immutable and safe to share.
type Vocab struct {
	n      int
	pieces [][]byte
	kinds  []TokenKind
	eog    []int32
	// trie, depth-first: node i consumes tbyte[i] at depth tdepth[i]
	// (1-based); its subtree ends before tnext[i]; ttok[i] is the first
	// token ending there (-1 none), link chains tokens with equal bytes.
	tbyte    []byte
	tdepth   []uint16
	tnext    []int32
	ttok     []int32
	link     []int32
	maxDepth int
}

// NewVocab prepares pieces (each token's bytes, indexed by id) with their
// kinds (nil: every token is TokenText; an empty text piece is never
// allowed). The pieces are copied.
func NewVocab(pieces [][]byte, kinds []TokenKind) (*Vocab, error) {
	if kinds != nil && len(kinds) != len(pieces) {
		return nil, fmt.Errorf("grammar: %d kinds for %d pieces", len(kinds), len(pieces))
	}
	v := &Vocab{n: len(pieces), pieces: make([][]byte, len(pieces)), kinds: make([]TokenKind, len(pieces)), link: make([]int32, len(pieces))}
	var text []int32
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
		v.link[id] = -1
		switch k {
		case TokenText:
			text = append(text, int32(id))
		case TokenEOG:
			v.eog = append(v.eog, int32(id))
		}
	}
	slices.SortStableFunc(text, func(a, b int32) int { return bytes.Compare(v.pieces[a], v.pieces[b]) })
	var open []int32 // open[d] is the node at depth d+1 on the current path
	var prev []byte
	for _, id := range text {
		p := v.pieces[id]
		if bytes.Equal(p, prev) && len(open) == len(p) {
			last := open[len(open)-1]
			t := v.ttok[last]
			for v.link[t] >= 0 {
				t = v.link[t]
			}
			v.link[t] = id
			continue
		}
		lcp := 0
		for lcp < len(prev) && lcp < len(p) && prev[lcp] == p[lcp] {
			lcp++
		}
		for len(open) > lcp {
			v.tnext[open[len(open)-1]] = int32(len(v.tbyte))
			open = open[:len(open)-1]
		}
		for d := lcp; d < len(p); d++ {
			open = append(open, int32(len(v.tbyte)))
			v.tbyte = append(v.tbyte, p[d])
			v.tdepth = append(v.tdepth, uint16(d+1))
			v.tnext = append(v.tnext, 0)
			v.ttok = append(v.ttok, -1)
		}
		v.ttok[open[len(open)-1]] = id
		v.maxDepth = max(v.maxDepth, len(p))
		prev = p
	}
	for _, o := range open {
		v.tnext[o] = int32(len(v.tbyte))
	}
	return v, nil
}

// Size is the number of tokens.
func (v *Vocab) Size() int { return v.n }

// TrieNodes is the number of trie nodes (a mask's worst-case work).
func (v *Vocab) TrieNodes() int { return len(v.tbyte) }

// Piece is token id's bytes; the caller must not modify them.
func (v *Vocab) Piece(id int32) []byte { return v.pieces[id] }
