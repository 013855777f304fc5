package tokenizer

import (
	"fmt"
	"strings"
	"sync"
)

// Model kinds a Tokenizer implements.
const (
	ModelSPM = "llama" // SentencePiece with scores and byte fallback
	ModelBPE = "gpt2"  // byte-level BPE with merges
)

// Tokenizer encodes text to token ids and maps ids back to bytes for one
// vocabulary. It implements engine.Vocab. Build it with New or FromGGUF; it
// is immutable and safe for concurrent use.
type Tokenizer struct {
	model        string
	preName      string
	pre          preKind
	tokens       []string
	scores       []float32
	attrs        []attr
	tokenID      map[string]int32
	ranks        map[mergePair]int
	idMerges     map[uint64]idMerge // fast path of ranks, nil when not exact
	byteID       [256]int32         // byte-level alphabet token of each byte
	byteToken    [256]int32         // SentencePiece byte-fallback ids, Absent if none
	pieces       [][]byte
	special      []int32
	eog          map[int32]bool
	eogList      []int32
	ignoreMerges bool

	bos, eos, eot, eom, unk, pad int32
	addBOS, addEOS, spacePrefix  bool
	chatTemplate                 string

	scratch sync.Pool // *bpeState
}

// New builds a Tokenizer from spec.
//
// Errors: ErrInvalidSpec when the token, score or type arrays are
// inconsistent, or a gpt2 vocabulary has no merges; ErrUnsupported for a
// model other than "llama" and "gpt2", or a gpt2 pre-tokenizer outside the
// gpt-2, llama-bpe, qwen2 and qwen35 families (an absent or "default" pre,
// which llama.cpp runs with a generic expression and a warning, included).
// Both are wrapped with the offending value.
func New(spec Spec) (*Tokenizer, error) {
	if err := spec.validate(); err != nil {
		return nil, err
	}
	t := &Tokenizer{model: spec.Model, preName: spec.Pre, chatTemplate: spec.ChatTemplate}
	if err := t.setModel(spec); err != nil {
		return nil, err
	}
	t.setVocab(spec)
	if spec.Model == ModelBPE {
		t.setMerges(spec.Merges)
	}
	fim := t.setSpecial(spec)
	t.buildEOG(fim[3], fim[4], fim[5])
	t.buildSpecialList()
	t.applyModelAttrs(spec.Name, spec.Pre)
	t.buildPieces()
	t.scratch.New = func() any { return new(bpeState) }
	return t, nil
}

// setModel sets what the tokenizer model fixes: the pre-tokenizer, the
// default special ids and whether BOS and a space prefix are added.
func (t *Tokenizer) setModel(spec Spec) error {
	switch spec.Model {
	case ModelSPM:
		t.pre = preNone
		t.bos, t.eos, t.unk = 1, 2, 0
		t.addBOS, t.spacePrefix = true, true
	case ModelBPE:
		p, ok := preInfos[spec.Pre]
		if !ok {
			return fmt.Errorf("%w: tokenizer.ggml.pre %q", ErrUnsupported, spec.Pre)
		}
		t.pre = p.kind
		t.bos, t.eos, t.unk = 11, 11, Absent
		t.addBOS = p.addBOS
		t.ignoreMerges = p.ignoreMerges
		if len(spec.Merges) == 0 {
			return fmt.Errorf("%w: tokenizer.ggml.merges is missing", ErrInvalidSpec)
		}
	default:
		return fmt.Errorf("%w: tokenizer.ggml.model %q", ErrUnsupported, spec.Model)
	}
	t.eot, t.eom, t.pad = Absent, Absent, Absent
	return nil
}

// setVocab fills the token texts (an empty one named [EMPTY_i], as
// llama.cpp does), their ids, scores and attributes.
func (t *Tokenizer) setVocab(spec Spec) {
	n := len(spec.Tokens)
	t.tokens = make([]string, n)
	t.scores = make([]float32, n)
	t.attrs = make([]attr, n)
	t.tokenID = make(map[string]int32, n)
	for i, s := range spec.Tokens {
		if s == "" {
			s = fmt.Sprintf("[EMPTY_%d]", i)
		}
		t.tokens[i] = s
		t.tokenID[s] = int32(i) // a repeated text resolves to its last id
		if spec.Scores != nil {
			t.scores[i] = spec.Scores[i]
		}
		t.attrs[i] = attrNormal
		if spec.Types != nil {
			t.attrs[i] = attrOf(TokenType(spec.Types[i]))
		}
	}
}

// setMerges ranks the BPE merge rules (the first of a repeated rule wins)
// and prepares the id-keyed fast path when the vocabulary allows it.
func (t *Tokenizer) setMerges(merges []string) {
	t.ranks = make(map[mergePair]int, len(merges))
	for rank, m := range merges {
		if p, ok := splitMerge(m); ok {
			if _, dup := t.ranks[p]; !dup {
				t.ranks[p] = rank
			}
		}
	}
	t.buildIDMerges()
	if t.idMerges != nil {
		t.ranks = nil // the string path is not used
	}
}

// setSpecial sets the special ids and flags from the file (a default
// outside the vocabulary is dropped; the file's value replaces the default
// when it is in range), then finds EOT, EOM and the FIM ids by their texts
// as llama.cpp does, and marks unused control tokens. It returns the FIM
// ids (pre, suf, mid, pad, rep, sep).
func (t *Tokenizer) setSpecial(spec Spec) [6]int32 {
	n := len(t.tokens)
	inRange := func(id int32) bool { return id >= 0 && int(id) < n }
	set := func(dst *int32, v int32) {
		if !inRange(*dst) {
			*dst = Absent
		}
		if inRange(v) {
			*dst = v
		}
	}
	set(&t.bos, spec.BOS)
	set(&t.eos, spec.EOS)
	set(&t.eot, spec.EOT)
	set(&t.eom, spec.EOM)
	set(&t.unk, spec.UNK)
	set(&t.pad, spec.PAD)
	fim := [6]int32{Absent, Absent, Absent, Absent, Absent, Absent}
	for i, v := range []int32{spec.FIMPre, spec.FIMSuf, spec.FIMMid, spec.FIMPad, spec.FIMRep, spec.FIMSep} {
		set(&fim[i], v)
	}
	if spec.AddBOS != nil {
		t.addBOS = *spec.AddBOS
	}
	if spec.AddEOS != nil {
		t.addEOS = *spec.AddEOS
	}
	if spec.AddSpacePrefix != nil {
		t.spacePrefix = *spec.AddSpacePrefix
	}

	t.detectByText(&t.eot, eotTexts)
	t.detectByText(&t.eom, eomTexts)
	for i, texts := range [][]string{fimPreTexts, fimSufTexts, fimMidTexts, fimPadTexts, fimRepTexts, fimSepTexts} {
		t.detectByText(&fim[i], texts)
	}
	for id, a := range t.attrs {
		if a&attrControl != 0 && strings.Contains(t.tokens[id], "unused") {
			t.attrs[id] |= attrUnused
		}
	}
	return fim
}

// buildPieces finds the byte-fallback ids and renders every token's piece.
func (t *Tokenizer) buildPieces() {
	for b := range t.byteToken {
		t.byteToken[b] = t.findByteToken(byte(b))
	}
	t.pieces = make([][]byte, len(t.tokens))
	for id := range t.pieces {
		t.pieces[id] = t.renderPiece(int32(id))
	}
}

// findByteToken is the SentencePiece byte-fallback id of b: <0xNN>, else
// the one-byte token, else unk, else Absent (the byte is dropped).
func (t *Tokenizer) findByteToken(b byte) int32 {
	if id, ok := t.tokenID[fmt.Sprintf("<0x%02X>", b)]; ok {
		return id
	}
	if id, ok := t.tokenID[string([]byte{b})]; ok {
		return id
	}
	return t.unk
}

// renderPiece is the bytes token id stands for. Control, unknown and
// user-defined tokens render as their text; byte tokens as their byte;
// normal tokens unescaped ("▁" → space for SentencePiece, the byte alphabet
// for BPE); unused and undefined tokens as nothing.
func (t *Tokenizer) renderPiece(id int32) []byte {
	text, a := t.tokens[id], t.attrs[id]
	switch {
	case a&(attrControl|attrUnknown|attrUserDefined) != 0:
		return []byte(text)
	case a&attrNormal != 0:
		if t.model == ModelSPM {
			return []byte(strings.ReplaceAll(text, spmSpace, " "))
		}
		return decodeByteLevel(text)
	case a&attrByte != 0:
		if t.model == ModelBPE && !strings.HasPrefix(text, "<0x") {
			return decodeByteLevel(text)
		}
		var b byte
		if _, err := fmt.Sscanf(text, "<0x%02X>", &b); err != nil {
			return nil
		}
		return []byte{b}
	}
	return nil
}

// EncodeOptions select what Encode adds and recognises.
type EncodeOptions struct {
	// AddSpecial adds BOS and/or EOS as the vocabulary asks (AddBOS, AddEOS).
	AddSpecial bool
	// ParseSpecial matches control tokens such as "<|im_start|>" in the
	// text as single ids. Without it they are encoded as plain text.
	// User-defined tokens are always matched.
	ParseSpecial bool
}

// Encode returns the token ids of text, exactly as llama.cpp's
// llama_tokenize(text, add_special, parse_special) would. text may hold any
// bytes: invalid UTF-8 goes through byte fallback (SentencePiece) or becomes
// U+FFFD per byte (byte-level BPE).
func (t *Tokenizer) Encode(text string, opts EncodeOptions) []int32 {
	st := t.scratch.Get().(*bpeState)
	defer t.scratch.Put(st)
	var out []int32
	addBOS := opts.AddSpecial && t.addBOS && t.bos != Absent
	addEOS := opts.AddSpecial && t.addEOS && t.eos != Absent
	if addBOS {
		out = append(out, t.bos)
	}
	prevSpecial := true
	for _, f := range t.partition(text, opts.ParseSpecial) {
		if f.token != Absent {
			out = append(out, f.token)
			prevSpecial = true
			continue
		}
		if t.model == ModelSPM {
			s := f.text
			if t.spacePrefix && prevSpecial {
				s = " " + s
			}
			out = t.encodeSPM(st, escapeSpaces(s), out)
		} else {
			out = t.encodeBPE(st, f.text, out)
		}
		prevSpecial = false
	}
	if addEOS {
		out = append(out, t.eos)
	}
	return out
}

// Decode returns the text of ids with control tokens as their text (as
// llama-server's /detokenize gives it): the concatenation of their
// pieces, with the leading space that SentencePiece encoding adds removed
// from the first piece. Unlike llama_detokenize it does no clean-up of
// spaces around punctuation. Ids out of range contribute nothing. For the
// text a user reads (control tokens hidden) use Renderer.
func (t *Tokenizer) Decode(ids []int32) []byte { return t.decode(t, ids) }

// Piece is the raw bytes of token id (possibly part of a UTF-8 sequence),
// as llama_token_to_piece gives them with special=true: control and
// unknown tokens render as their text. nil for ids out of range. The
// caller must not modify it. For the text a user reads, where control
// tokens render as nothing, use Renderer.
func (t *Tokenizer) Piece(id int32) []byte {
	if id < 0 || int(id) >= len(t.pieces) {
		return nil
	}
	return t.pieces[id]
}

// IsEOG reports whether id ends a turn: eos, eot, eom and every token
// llama.cpp treats as an end of generation (<|im_end|>, <|eot_id|>,
// <|endoftext|>, ...).
func (t *Tokenizer) IsEOG(id int32) bool { return t.eog[id] }

// EOG returns the end-of-generation ids in ascending order. The caller must
// not modify it.
func (t *Tokenizer) EOG() []int32 { return t.eogList }

// Control returns, in ascending order, the ids of the control and unknown
// tokens ("<s>", "<|im_start|>", "<unk>"): their Piece is their text, but
// they are not text a model writes. A fresh slice.
func (t *Tokenizer) Control() []int32 {
	var out []int32
	for id, a := range t.attrs {
		if a&(attrControl|attrUnknown) != 0 {
			out = append(out, int32(id))
		}
	}
	return out
}

// IsControl reports whether id is a control or unknown token, one that
// Control lists; false for ids out of range. With IsByte it gives the host
// the token attributes of plugin ABI 2 (host.TokenTyper).
func (t *Tokenizer) IsControl(id int32) bool {
	return id >= 0 && int(id) < len(t.attrs) && t.attrs[id]&(attrControl|attrUnknown) != 0
}

// IsByte reports whether id is a byte-fallback token ("<0x0A>"); false for
// ids out of range.
func (t *Tokenizer) IsByte(id int32) bool {
	return id >= 0 && int(id) < len(t.attrs) && t.attrs[id]&attrByte != 0
}

// Size is n_vocab; valid ids are 0 <= id < Size().
func (t *Tokenizer) Size() int { return len(t.tokens) }

// Model is tokenizer.ggml.model ("llama" or "gpt2").
func (t *Tokenizer) Model() string { return t.model }

// Pre is tokenizer.ggml.pre as the file gave it.
func (t *Tokenizer) Pre() string { return t.preName }

// BOS is the beginning-of-sequence id, or Absent.
func (t *Tokenizer) BOS() int32 { return t.bos }

// EOS is the end-of-sequence id, or Absent.
func (t *Tokenizer) EOS() int32 { return t.eos }

// EOT is the end-of-turn id (from the file or found by its text), or Absent.
func (t *Tokenizer) EOT() int32 { return t.eot }

// AddBOS reports whether Encode with AddSpecial prepends BOS.
func (t *Tokenizer) AddBOS() bool { return t.addBOS && t.bos != Absent }

// AddEOS reports whether Encode with AddSpecial appends EOS.
func (t *Tokenizer) AddEOS() bool { return t.addEOS && t.eos != Absent }

// TokenText is the vocabulary text of id ("▁Hello", "Ġworld", "<|im_end|>"),
// or "" out of range.
func (t *Tokenizer) TokenText(id int32) string {
	if id < 0 || int(id) >= len(t.tokens) {
		return ""
	}
	return t.tokens[id]
}

// TokenID is the id whose vocabulary text is exactly text.
func (t *Tokenizer) TokenID(text string) (int32, bool) {
	id, ok := t.tokenID[text]
	return id, ok
}

// ChatTemplate is tokenizer.chat_template, or "".
func (t *Tokenizer) ChatTemplate() string { return t.chatTemplate }
