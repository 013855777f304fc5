package tokenizer

import "strings"

// spmSpace is SentencePiece's visible space, U+2581 "▁".
const spmSpace = "\u2581"

// encodeSPM appends the ids of text (a run with no special tokens, spaces
// already escaped to "▁") to out. It merges adjacent pieces greedily by the
// score of the token they form; a final piece that is not a token is
// emitted as <0xNN> byte tokens.
func (t *Tokenizer) encodeSPM(st *bpeState, text string, out []int32) []int32 {
	sym := mergeRun(st, text, spmRanker{t, text})
	for i := 0; len(sym) > 0 && i >= 0; i = sym[i].next {
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
