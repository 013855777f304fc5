package tokenizer

import "slices"

// RenderOptions select how a Renderer turns token ids into text. The zero
// value renders what llama.cpp's tools show of generated text.
type RenderOptions struct {
	// Special renders control and unknown tokens ("<s>", "<|eot_id|>",
	// "<unk>") as their text, as llama_token_to_piece does with
	// special=true (llama-cli --special). Without it they render as
	// nothing, as with special=false: they are markup, not text a model
	// writes. User-defined tokens render as their text either way.
	Special bool
	// Preserve are texts of control tokens rendered as their text even
	// without Special: a chat format's preserved tokens (llama.cpp's
	// preserved_tokens, "<|python_tag|>", "<tool_call>"), markers its
	// tool-call parser must see. A text that is not exactly one token's
	// vocabulary text is ignored.
	Preserve []string
}

// Renderer renders token ids as text under fixed RenderOptions. It
// implements engine.Vocab and Pieces, so a Session or a Stream given one
// produces the text a user reads. Build it with Tokenizer.Renderer; it is
// immutable and safe for concurrent use.
type Renderer struct {
	t       *Tokenizer
	special bool
	keep    []int32 // control tokens rendered anyway, ascending
}

// Renderer returns a Renderer of t's tokens under opts.
func (t *Tokenizer) Renderer(opts RenderOptions) *Renderer {
	r := &Renderer{t: t, special: opts.Special}
	if opts.Special {
		return r
	}
	for _, s := range opts.Preserve {
		if id, ok := t.tokenID[s]; ok && t.IsControl(id) && !slices.Contains(r.keep, id) {
			r.keep = append(r.keep, id)
		}
	}
	slices.Sort(r.keep)
	return r
}

// Piece is the bytes token id renders as (possibly part of a UTF-8
// sequence): Tokenizer.Piece, or nothing for a control or unknown token
// that neither Special nor Preserve renders. nil for ids out of range. The
// caller must not modify it.
func (r *Renderer) Piece(id int32) []byte {
	if !r.special && r.t.IsControl(id) {
		if _, kept := slices.BinarySearch(r.keep, id); !kept {
			return nil
		}
	}
	return r.t.Piece(id)
}

// Decode returns the text of ids: the concatenation of their pieces, with
// the leading space that SentencePiece encoding adds removed from the
// first piece, as llama_detokenize(remove_special=false,
// unparse_special=Special) gives it. Ids out of range contribute nothing.
func (r *Renderer) Decode(ids []int32) []byte { return r.t.decode(r, ids) }

// IsEOG is Tokenizer.IsEOG.
func (r *Renderer) IsEOG(id int32) bool { return r.t.IsEOG(id) }

// Size is Tokenizer.Size.
func (r *Renderer) Size() int { return r.t.Size() }

// decode concatenates the pieces of ids, the space SentencePiece adds
// removed from the first one (only: a first token that renders as nothing
// leaves the next one's space, as in llama_detokenize).
func (t *Tokenizer) decode(p Pieces, ids []int32) []byte {
	var out []byte
	for i, id := range ids {
		b := p.Piece(id)
		if i == 0 && t.spacePrefix && len(b) > 0 && b[0] == ' ' {
			b = b[1:]
		}
		out = append(out, b...)
	}
	return out
}
