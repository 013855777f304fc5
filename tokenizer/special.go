package tokenizer

import (
	"slices"
	"strings"
)

// attr is a token's attribute set, derived from its type and adjusted by
// the special-token rules below (as llama.cpp adjusts them).
type attr uint16

const (
	attrUnknown attr = 1 << iota
	attrUnused
	attrNormal
	attrControl
	attrUserDefined
	attrByte
	attrUndefined
	attrLStrip // matching the token also removes the whitespace before it
	attrRStrip // matching the token also removes the whitespace after it
)

func attrOf(t TokenType) attr {
	switch t {
	case TypeUnknown:
		return attrUnknown
	case TypeUnused:
		return attrUnused
	case TypeNormal:
		return attrNormal
	case TypeControl:
		return attrControl
	case TypeUserDefined:
		return attrUserDefined
	case TypeByte:
		return attrByte
	}
	return attrUndefined
}

// Token texts by which llama.cpp recognises special tokens that a file does
// not name by id. A recognised token is forced to the control type.
var (
	eotTexts = []string{"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>",
		"<|end_of_text|>", "<EOT>", "_<EOT>", "[EOT]", "<｜end▁of▁sentence｜>", "<end_of_utterance>"}
	eomTexts    = []string{"<|eom_id|>"}
	fimPreTexts = []string{"<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<｜fim▁begin｜>", "<PRE>", "▁<PRE>", "<|code_prefix|>", "<|prefix|>"}
	fimSufTexts = []string{"<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<｜fim▁hole｜>", "<SUF>", "▁<SUF>", "<|code_suffix|>", "<|suffix|>"}
	fimMidTexts = []string{"<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<｜fim▁end｜>", "<MID>", "▁<MID>", "<|code_middle|>", "<|middle|>"}
	fimPadTexts = []string{"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"}
	fimRepTexts = []string{"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"}
	fimSepTexts = []string{"<|file_sep|>"}

	// eogTexts end a turn whatever the file says.
	eogTexts = []string{"<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>",
		"<|calls|>", "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]",
		"[EOS]", "<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>",
		"<｜end▁of▁sentence｜>", "[e~["}

	// alwaysRendered are gpt-oss tokens llama.cpp turns into user-defined
	// tokens so they are always rendered and always parsed.
	alwaysRendered = []string{"<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"}
)

// detectByText sets *id, if it is Absent, to the token whose text comes
// first in texts, and marks that token control. (llama.cpp takes whichever
// its hash map yields first; the list order picks the same token on the
// llama.cpp vocabularies: <|eot_id|> over <|end_of_text|>, <|im_end|> over
// <|endoftext|>.)
func (t *Tokenizer) detectByText(id *int32, texts []string) {
	if *id != Absent {
		return
	}
	for _, s := range texts {
		if v, ok := t.tokenID[s]; ok {
			*id = v
			t.attrs[v] |= attrControl
			return
		}
	}
}

// buildEOG fills the end-of-generation set the way llama.cpp decides it:
// the FIM pad/repo/file-separator tokens, every token whose text is in
// eogTexts, and the eos, eot and eom ids; then two model-family fixes.
func (t *Tokenizer) buildEOG(fimPad, fimRep, fimSep int32) {
	t.eog = map[int32]bool{}
	for _, id := range []int32{fimPad, fimRep, fimSep} {
		if id != Absent {
			t.eog[id] = true
		}
	}
	for _, s := range eogTexts {
		if id, ok := t.tokenID[s]; ok {
			t.eog[id] = true
			t.attrs[id] |= attrControl
		}
	}
	for _, s := range alwaysRendered {
		if id, ok := t.tokenID[s]; ok {
			t.attrs[id] = attrUserDefined
		}
	}
	for _, id := range []int32{t.eos, t.eot, t.eom} {
		if id != Absent {
			t.eog[id] = true
		}
	}
	has := func(s string) (int32, bool) {
		id, ok := t.tokenID[s]
		return id, ok && t.eog[id]
	}
	// gpt-oss (o200k_harmony) and solar-open: <|end|> ends a message, not
	// the generation, when <|return|>/<|call|> or <|calls|>/<|flush|> exist.
	_, ret := has("<|return|>")
	_, call := has("<|call|>")
	_, calls := has("<|calls|>")
	_, flush := has("<|flush|>")
	if end, ok := has("<|end|>"); ok && ((ret && (call || calls)) || ((call || calls) && flush)) {
		delete(t.eog, end)
		t.attrs[end] = attrUserDefined
	}
	// gemma4: </s> is not an end when <|tool_response> is one.
	if _, ok := has("<|tool_response>"); ok {
		if s, ok := has("</s>"); ok {
			delete(t.eog, s)
			t.attrs[s] = attrNormal
		}
	}
	t.eogList = t.eogList[:0]
	for id := range t.eog {
		t.eogList = append(t.eogList, id)
	}
	slices.Sort(t.eogList)
}

// buildSpecialList lists the tokens matched verbatim in text before
// encoding (control, user-defined and unknown), longest text first.
func (t *Tokenizer) buildSpecialList() {
	for id, a := range t.attrs {
		if a&(attrControl|attrUserDefined|attrUnknown) != 0 {
			t.special = append(t.special, int32(id))
		}
	}
	slices.SortStableFunc(t.special, func(a, b int32) int {
		return len(t.tokens[b]) - len(t.tokens[a])
	})
}

// applyModelAttrs sets the strip attributes llama.cpp sets by model and
// pre-tokenizer name (they are not stored in GGUF files).
func (t *Tokenizer) applyModelAttrs(name, pre string) {
	set := func(text string, a attr, on bool) {
		id, ok := t.tokenID[text]
		if !ok {
			return
		}
		if on {
			t.attrs[id] |= a
		} else {
			t.attrs[id] &^= a
		}
	}
	name = strings.ToLower(name)
	switch {
	case pre == "jina-v2-de" || pre == "jina-v2-es" || pre == "jina-v2-code":
		set("<mask>", attrLStrip, true)
	case strings.Contains(name, "phi-3") || strings.Contains(name, "phi3"):
		for _, id := range t.special {
			t.attrs[id] |= attrRStrip
		}
		set("</s>", attrRStrip, true)
		for _, s := range []string{"<unk>", "<s>", "<|endoftext|>"} {
			set(s, attrRStrip, false)
		}
	case strings.Contains(name, "modern-bert"):
		set("[MASK]", attrLStrip, true)
	}
}

// isCSpace is C's isspace in the "C" locale.
func isCSpace(c byte) bool { return c == ' ' || (c >= '\t' && c <= '\r') }

// fragment is a piece of the input: raw text (token == Absent) or a
// special token matched in it.
type fragment struct {
	token int32
	text  string
}

// partition splits text around the special tokens it contains. With
// parseSpecial false only user-defined tokens are matched; control and
// unknown tokens stay plain text.
func (t *Tokenizer) partition(text string, parseSpecial bool) []fragment {
	frags := []fragment{{token: Absent, text: text}}
	if text == "" {
		return nil
	}
	for _, id := range t.special {
		a := t.attrs[id]
		if !parseSpecial && a&(attrControl|attrUnknown) != 0 {
			continue
		}
		tok := t.tokens[id]
		if !strings.Contains(text, tok) {
			continue
		}
		var next []fragment
		for _, f := range frags {
			if f.token != Absent {
				next = append(next, f)
				continue
			}
			rest := f.text
			for {
				k := strings.Index(rest, tok)
				if k < 0 {
					break
				}
				left := rest[:k]
				if a&attrLStrip != 0 {
					left = strings.TrimRightFunc(left, func(r rune) bool { return r < 0x80 && isCSpace(byte(r)) })
				}
				if left != "" {
					next = append(next, fragment{token: Absent, text: left})
				}
				next = append(next, fragment{token: id})
				rest = rest[k+len(tok):]
				if a&attrRStrip != 0 {
					rest = strings.TrimLeftFunc(rest, func(r rune) bool { return r < 0x80 && isCSpace(byte(r)) })
				}
			}
			if rest != "" {
				next = append(next, fragment{token: Absent, text: rest})
			}
		}
		frags = next
	}
	return frags
}
