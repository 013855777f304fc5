package tokenizer

import (
	"math"
	"strings"
)

// byteToRune is GPT-2's byte-level alphabet: printable Latin-1 bytes map to
// themselves, the other 68 bytes to U+0100.. in byte order, so every byte is
// a visible code point in token texts.
var byteToRune, runeToByte = func() (fwd [256]rune, rev map[rune]byte) {
	rev = make(map[rune]byte, 256)
	n := rune(0)
	for b := 0; b < 256; b++ {
		printable := (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF)
		if printable {
			fwd[b] = rune(b)
		} else {
			fwd[b] = 256 + n
			n++
		}
		rev[fwd[b]] = byte(b)
	}
	return fwd, rev
}()

// byteEncoded is the UTF-8 text of each byte's alphabet code point.
var byteEncoded = func() (t [256]string) {
	for b, r := range byteToRune {
		t[b] = string(r)
	}
	return t
}()

// mergePair is one BPE merge rule's left and right parts.
type mergePair struct{ left, right string }

// bpeSymbol is a span of the word being merged; merged-away symbols have
// n == 0. prev/next link live symbols.
type bpeSymbol struct {
	start, n   int
	prev, next int
	id         int32 // the symbol's token id (fast path only)
}

// bpeBigram is a candidate merge of symbols left and right (adjacent when
// queued) whose texts had total length size. key orders the queue, lowest
// first: the priority (BPE rank, or SentencePiece score descending) in the
// high 32 bits, the left index in the low 32 bits, so that ties go to the
// leftmost pair.
type bpeBigram struct {
	key         uint64
	left, right int
	size        int
}

// rankKey is the queue key of a BPE merge of rank at left.
func rankKey(rank int32, left int) uint64 { return uint64(uint32(rank))<<32 | uint64(uint32(left)) }

// scoreKey is the queue key of a SentencePiece merge scoring score at left:
// higher scores come first.
func scoreKey(score float32, left int) uint64 {
	bits := math.Float32bits(score)
	if bits&0x80000000 != 0 {
		bits = ^bits
	} else {
		bits |= 0x80000000
	}
	return uint64(^bits)<<32 | uint64(uint32(left))
}

// bigramHeap is a binary min-heap of bigrams by key.
type bigramHeap struct {
	items []bpeBigram
}

func (h *bigramHeap) push(b bpeBigram) {
	h.items = append(h.items, b)
	i := len(h.items) - 1
	for i > 0 {
		p := (i - 1) / 2
		if h.items[i].key >= h.items[p].key {
			break
		}
		h.items[i], h.items[p] = h.items[p], h.items[i]
		i = p
	}
}

func (h *bigramHeap) pop() bpeBigram {
	top := h.items[0]
	last := len(h.items) - 1
	h.items[0] = h.items[last]
	h.items = h.items[:last]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < last && h.items[l].key < h.items[m].key {
			m = l
		}
		if r < last && h.items[r].key < h.items[m].key {
			m = r
		}
		if m == i {
			break
		}
		h.items[i], h.items[m] = h.items[m], h.items[i]
		i = m
	}
	return top
}

// bpeState is the per-call scratch space of the byte-level BPE encoder.
type bpeState struct {
	split   splitter
	raw     []byte
	word    []byte
	symbols []bpeSymbol
	heap    bigramHeap
}

// idMerge is a merge rule keyed by token ids: its rank and the id of the
// merged token.
type idMerge struct {
	rank   int32
	merged int32
}

func pairKey(l, r int32) uint64 { return uint64(uint32(l))<<32 | uint64(uint32(r)) }

// buildIDMerges prepares the fast merge path, which works on token ids
// instead of strings. It is only exact when every byte of the alphabet is a
// token and every rule's parts and result are tokens, so it is left nil
// otherwise (and the string path is used).
func (t *Tokenizer) buildIDMerges() {
	for b := range t.byteID {
		id, ok := t.tokenID[byteEncoded[b]]
		if !ok {
			return
		}
		t.byteID[b] = id
	}
	m := make(map[uint64]idMerge, len(t.ranks))
	for p, rank := range t.ranks {
		l, okL := t.tokenID[p.left]
		r, okR := t.tokenID[p.right]
		merged, okM := t.tokenID[p.left+p.right]
		if !okL || !okR || !okM {
			return
		}
		m[pairKey(l, r)] = idMerge{rank: int32(rank), merged: merged}
	}
	t.idMerges = m
}

// encodeBPE appends the ids of text (a run with no special tokens) to out.
func (t *Tokenizer) encodeBPE(st *bpeState, text string, out []int32) []int32 {
	st.split.reset(text, t.pre == preQwen35)
	st.split.split(t.pre)
	start := 0
	for _, end := range st.split.ends {
		st.raw = st.raw[:0]
		for _, r := range st.split.cps[start:end] {
			st.raw = appendRune(st.raw, r)
		}
		start = end
		if t.ignoreMerges || t.idMerges == nil {
			st.word = st.word[:0]
			for _, b := range st.raw {
				st.word = append(st.word, byteEncoded[b]...)
			}
			if t.ignoreMerges {
				if id, ok := t.tokenID[string(st.word)]; ok {
					out = append(out, id)
					continue
				}
			}
		}
		if t.idMerges != nil {
			out = t.mergeIDs(st, out)
		} else {
			out = t.mergeWord(st, string(st.word), out)
		}
	}
	return out
}

// mergeIDs is mergeWord on token ids: the symbols start as the ids of
// st.raw's bytes and merge by idMerges. Same order, same result.
func (t *Tokenizer) mergeIDs(st *bpeState, out []int32) []int32 {
	st.symbols = st.symbols[:0]
	for i, b := range st.raw {
		st.symbols = append(st.symbols, bpeSymbol{n: 1, prev: i - 1, next: i + 1, id: t.byteID[b]})
	}
	if len(st.symbols) == 0 {
		return out
	}
	if len(st.symbols) == 1 {
		return append(out, st.symbols[0].id)
	}
	sym := mergeSymbols(st, idRanker{t})
	for i := 0; i >= 0; i = sym[i].next {
		out = append(out, sym[i].id)
	}
	return out
}

// mergeWord runs BPE merges over one byte-encoded word and appends its ids.
func (t *Tokenizer) mergeWord(st *bpeState, word string, out []int32) []int32 {
	return t.appendMerged(out, word, mergeRun(st, word, bpeRanker{t, word}), (*Tokenizer).bpeByte)
}

// decodeByteLevel maps a byte-level token text back to raw bytes. A code
// point outside the alphabet is rendered as llama.cpp renders it.
func decodeByteLevel(text string) []byte {
	out := make([]byte, 0, len(text))
	for i := 0; i < len(text); {
		r, n := decodeRune(text[i:])
		if b, ok := runeToByte[r]; ok {
			out = append(out, b)
		} else {
			out = append(out, "[UNK_BYTE_0x"...)
			for _, c := range []byte(text[i : i+n]) {
				out = append(out, "0123456789abcdef"[c>>4], "0123456789abcdef"[c&15])
			}
			out = append(out, text...)
			out = append(out, ']')
		}
		i += n
	}
	return out
}

// splitMerge splits a merges entry at its first space after position 0.
func splitMerge(m string) (mergePair, bool) {
	if len(m) < 2 {
		return mergePair{}, false
	}
	k := strings.IndexByte(m[1:], ' ')
	if k < 0 {
		return mergePair{}, false
	}
	return mergePair{m[:k+1], m[k+2:]}, true
}
