package tokenizer

import (
	"strings"
	"unicode/utf8"
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
}

// bpeBigram is a candidate merge of symbols left and right (adjacent when
// queued) whose texts had total length size.
type bpeBigram struct {
	left, right int
	rank        int // BPE: merge rank (lower first)
	score       float32
	size        int
}

// bigramHeap is a binary heap of bigrams; less decides priority.
type bigramHeap struct {
	items []bpeBigram
	less  func(a, b *bpeBigram) bool
}

func (h *bigramHeap) push(b bpeBigram) {
	h.items = append(h.items, b)
	i := len(h.items) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(&h.items[i], &h.items[p]) {
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
		if l < last && h.less(&h.items[l], &h.items[m]) {
			m = l
		}
		if r < last && h.less(&h.items[r], &h.items[m]) {
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

// bpeLess orders merges by rank, then leftmost first.
func bpeLess(a, b *bpeBigram) bool {
	return a.rank < b.rank || (a.rank == b.rank && a.left < b.left)
}

// bpeState is the per-call scratch space of the byte-level BPE encoder.
type bpeState struct {
	split   splitter
	word    []byte
	symbols []bpeSymbol
	heap    bigramHeap
}

// encodeBPE appends the ids of text (a run with no special tokens) to out.
func (t *Tokenizer) encodeBPE(st *bpeState, text string, out []int32) []int32 {
	st.split.reset(text)
	st.split.split(t.pre)
	start := 0
	for _, end := range st.split.ends {
		st.word = st.word[:0]
		for _, r := range st.split.cps[start:end] {
			var tmp [4]byte
			for _, b := range appendRune(tmp[:0], r) {
				st.word = append(st.word, byteEncoded[b]...)
			}
		}
		start = end
		out = t.mergeWord(st, string(st.word), out)
	}
	return out
}

// mergeWord runs BPE merges over one byte-encoded word and appends its ids.
func (t *Tokenizer) mergeWord(st *bpeState, word string, out []int32) []int32 {
	if t.ignoreMerges {
		if id, ok := t.tokenID[word]; ok {
			return append(out, id)
		}
	}
	st.symbols = st.symbols[:0]
	for off := 0; off < len(word); {
		n := min(utf8SeqLen(word[off]), len(word)-off)
		i := len(st.symbols)
		st.symbols = append(st.symbols, bpeSymbol{start: off, n: n, prev: i - 1, next: i + 1})
		off += n
	}
	if len(st.symbols) == 0 {
		return out
	}
	st.symbols[len(st.symbols)-1].next = -1
	st.heap.items = st.heap.items[:0]
	st.heap.less = bpeLess
	sym := st.symbols
	text := func(i int) string { return word[sym[i].start : sym[i].start+sym[i].n] }
	addBigram := func(l, r int) {
		if l < 0 || r < 0 {
			return
		}
		rank, ok := t.ranks[mergePair{text(l), text(r)}]
		if !ok {
			return
		}
		st.heap.push(bpeBigram{left: l, right: r, rank: rank, size: sym[l].n + sym[r].n})
	}
	for i := 1; i < len(sym); i++ {
		addBigram(i-1, i)
	}
	for len(st.heap.items) > 0 {
		b := st.heap.pop()
		l, r := &sym[b.left], &sym[b.right]
		if l.n == 0 || r.n == 0 || l.n+r.n != b.size {
			continue // stale: one side has merged since
		}
		l.n += r.n
		r.n = 0
		l.next = r.next
		if r.next >= 0 {
			sym[r.next].prev = b.left
		}
		addBigram(l.prev, b.left)
		addBigram(b.left, l.next)
	}
	for i := 0; i >= 0; i = sym[i].next {
		s := text(i)
		if id, ok := t.tokenID[s]; ok {
			out = append(out, id)
			continue
		}
		// No token for the merged text: fall back to single bytes, dropping
		// any byte the vocabulary lacks (as llama.cpp does).
		for j := 0; j < len(s); j++ {
			if id, ok := t.tokenID[s[j:j+1]]; ok {
				out = append(out, id)
			}
		}
	}
	return out
}

// decodeByteLevel maps a byte-level token text back to raw bytes. A code
// point outside the alphabet is rendered as llama.cpp renders it.
func decodeByteLevel(text string) []byte {
	out := make([]byte, 0, len(text))
	for i := 0; i < len(text); {
		r, n := decodeRune(text[i:])
		if b, ok := runeToByte[r]; ok && r != utf8.RuneError {
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
