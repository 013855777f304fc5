package tokenizer

// mergeRanker gives the queue key of merging adjacent symbols l and r of
// sym (lowest first; see bpeBigram), or ok false when they do not merge.
// The two tokenizer models differ only here: SentencePiece ranks a merge by
// the score of the token it forms, byte-level BPE by the merge rule's rank.
type mergeRanker interface {
	key(sym []bpeSymbol, l, r int) (key uint64, ok bool)
	// merged updates symbol l after r has been merged into it (the id
	// fast path sets its token id; the text rankers need nothing).
	merged(sym []bpeSymbol, l, r int)
}

// mergeRun splits text into its UTF-8 sequences (symbols in st.symbols)
// and merges adjacent symbols greedily, the best-ranked pair first (ties to
// the leftmost), until no pair merges: the loop llama.cpp's SentencePiece
// and BPE tokenizers share. It returns the symbols; the live ones are
// linked by next from 0 (none when text is empty). A type parameter rather
// than an interface value keeps the per-word call free of allocation.
func mergeRun[R mergeRanker](st *bpeState, text string, rank R) []bpeSymbol {
	st.symbols = st.symbols[:0]
	for off := 0; off < len(text); {
		n := min(utf8SeqLen(text[off]), len(text)-off)
		i := len(st.symbols)
		st.symbols = append(st.symbols, bpeSymbol{start: off, n: n, prev: i - 1, next: i + 1})
		off += n
	}
	if len(st.symbols) == 0 {
		return nil
	}
	return mergeSymbols(st, rank)
}

// appendMerged appends the ids of the live symbols of text as mergeRun
// left them: each symbol's token, or, for a merged text that is no token,
// one id per byte from byteID, dropping a byte it has none for (as
// llama.cpp does). The two models differ only in those byte ids:
// SentencePiece's <0xNN> tokens (Tokenizer.spmByte), byte-level BPE's
// one-character tokens (Tokenizer.bpeByte).
func (t *Tokenizer) appendMerged(out []int32, text string, sym []bpeSymbol, byteID func(t *Tokenizer, b byte) (int32, bool)) []int32 {
	for i := 0; len(sym) > 0 && i >= 0; i = sym[i].next {
		s := text[sym[i].start : sym[i].start+sym[i].n]
		if id, ok := t.tokenID[s]; ok {
			out = append(out, id)
			continue
		}
		for j := 0; j < len(s); j++ {
			if id, ok := byteID(t, s[j]); ok {
				out = append(out, id)
			}
		}
	}
	return out
}

// spmByte is SentencePiece's byte fallback: the <0xNN> token of b.
func (t *Tokenizer) spmByte(b byte) (int32, bool) {
	id := t.byteToken[b]
	return id, id >= 0
}

// bpeByte is byte-level BPE's fallback: the token whose text is the one
// byte b of the byte-encoded word.
func (t *Tokenizer) bpeByte(b byte) (int32, bool) {
	id, ok := t.tokenID[string([]byte{b})]
	return id, ok
}

// mergeSymbols merges the symbols in st.symbols (linked in order, at least
// one) greedily as mergeRun says and returns them; rank.merged sees each
// merge.
func mergeSymbols[R mergeRanker](st *bpeState, rank R) []bpeSymbol {
	st.symbols[len(st.symbols)-1].next = -1
	st.heap.items = st.heap.items[:0]
	sym := st.symbols
	push := func(l, r int) {
		if l < 0 || r < 0 {
			return
		}
		if k, ok := rank.key(sym, l, r); ok {
			st.heap.push(bpeBigram{key: k, left: l, right: r, size: sym[l].n + sym[r].n})
		}
	}
	for i := 1; i < len(sym); i++ {
		push(i-1, i)
	}
	for len(st.heap.items) > 0 {
		b := st.heap.pop()
		l, r := &sym[b.left], &sym[b.right]
		if l.n == 0 || r.n == 0 || l.n+r.n != b.size {
			continue // stale: one side has merged since
		}
		rank.merged(sym, b.left, b.right)
		l.n += r.n
		r.n = 0
		l.next = r.next
		if r.next >= 0 {
			sym[r.next].prev = b.left
		}
		push(l.prev, b.left)
		push(b.left, l.next)
	}
	return sym
}

// spmRanker ranks a SentencePiece merge by the score of the token the two
// symbols of text form (no such token: no merge).
type spmRanker struct {
	t    *Tokenizer
	text string
}

func (r spmRanker) key(sym []bpeSymbol, a, b int) (uint64, bool) {
	id, ok := r.t.tokenID[r.text[sym[a].start:sym[a].start+sym[a].n+sym[b].n]]
	if !ok {
		return 0, false
	}
	return scoreKey(r.t.scores[id], a), true
}

func (spmRanker) merged([]bpeSymbol, int, int) {}

// bpeRanker ranks a byte-level BPE merge of the two symbols of word by its
// rule's rank (no rule: no merge).
type bpeRanker struct {
	t    *Tokenizer
	word string
}

func (r bpeRanker) key(sym []bpeSymbol, a, b int) (uint64, bool) {
	left := r.word[sym[a].start : sym[a].start+sym[a].n]
	right := r.word[sym[b].start : sym[b].start+sym[b].n]
	rank, ok := r.t.ranks[mergePair{left, right}]
	if !ok {
		return 0, false
	}
	return rankKey(int32(rank), a), true
}

func (bpeRanker) merged([]bpeSymbol, int, int) {}

// idRanker ranks a merge of two symbols by the rule for their token ids
// (the fast path of mergeIDs) and gives the merged symbol the rule's id.
type idRanker struct{ t *Tokenizer }

func (r idRanker) key(sym []bpeSymbol, a, b int) (uint64, bool) {
	m, ok := r.t.idMerges[pairKey(sym[a].id, sym[b].id)]
	if !ok {
		return 0, false
	}
	return rankKey(m.rank, a), true
}

func (r idRanker) merged(sym []bpeSymbol, a, b int) {
	sym[a].id = r.t.idMerges[pairKey(sym[a].id, sym[b].id)].merged
}
