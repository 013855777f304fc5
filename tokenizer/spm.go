package tokenizer

import "strings"

// spmSpace is SentencePiece's visible space, U+2581 "▁".
const spmSpace = "\u2581"

// encodeSPM appends the ids of text (a run with no special tokens, spaces
// already escaped to "▁") to out. It merges adjacent pieces greedily by the
// score of the token they form; a final piece that is not a token is
// emitted as <0xNN> byte tokens.
func (t *Tokenizer) encodeSPM(st *bpeState, text string, out []int32) []int32 {
	st.symbols = st.symbols[:0]
	for off := 0; off < len(text); {
		n := min(utf8SeqLen(text[off]), len(text)-off)
		i := len(st.symbols)
		st.symbols = append(st.symbols, bpeSymbol{start: off, n: n, prev: i - 1, next: i + 1})
		off += n
	}
	if len(st.symbols) == 0 {
		return out
	}
	st.symbols[len(st.symbols)-1].next = -1
	st.heap.items = st.heap.items[:0]
	sym := st.symbols
	addBigram := func(l, r int) {
		if l < 0 || r < 0 {
			return
		}
		s := text[sym[l].start : sym[l].start+sym[l].n+sym[r].n]
		id, ok := t.tokenID[s]
		if !ok {
			return
		}
		st.heap.push(bpeBigram{key: scoreKey(t.scores[id], l), left: l, right: r, size: len(s)})
	}
	for i := 1; i < len(sym); i++ {
		addBigram(i-1, i)
	}
	for len(st.heap.items) > 0 {
		b := st.heap.pop()
		l, r := &sym[b.left], &sym[b.right]
		if l.n == 0 || r.n == 0 || l.n+r.n != b.size {
			continue
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
		s := text[sym[i].start : sym[i].start+sym[i].n]
		if id, ok := t.tokenID[s]; ok {
			out = append(out, id)
			continue
		}
		for j := 0; j < len(s); j++ {
			if id := t.byteToken[s[j]]; id >= 0 {
				out = append(out, id)
			}
		}
	}
	return out
}

// escapeSpaces replaces every ' ' with "▁".
func escapeSpaces(s string) string { return strings.ReplaceAll(s, " ", spmSpace) }
