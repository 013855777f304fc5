package grammar

// TokenSource is what VocabFromTokenizer reads: tokenizer.Tokenizer
// satisfies it.
type TokenSource interface {
	Size() int
	Piece(id int32) []byte
	IsEOG(id int32) bool
	IsControl(id int32) bool
}

// VocabFromTokenizer prepares a tokenizer's vocabulary: end-of-generation
// tokens are TokenEOG, control and unknown tokens TokenOther, every other
// token is matched by its piece.
func VocabFromTokenizer(t TokenSource) *Vocab {
	n := t.Size()
	pieces := make([][]byte, n)
	kinds := make([]TokenKind, n)
	for id := range int32(n) {
		pieces[id] = t.Piece(id)
		switch {
		case t.IsEOG(id):
			kinds[id] = TokenEOG
		case t.IsControl(id):
			kinds[id] = TokenOther
		}
	}
	v, _ := NewVocab(pieces, kinds) // lengths agree by construction
	return v
}
