package tokenizer

import "strings"

// spmSpace is SentencePiece's visible space, U+2581 "▁".
const spmSpace = "\u2581"

// encodeSPM appends the ids of text (a run with no special tokens, spaces
// already escaped to "▁") to out. It merges adjacent pieces greedily by the
// score of the token they form; a final piece that is not a token is
// emitted as <0xNN> byte tokens.
func (t *Tokenizer) encodeSPM(st *bpeState, text string, out []int32) []int32 {
	return t.appendMerged(out, text, mergeRun(st, text, spmRanker{t, text}), (*Tokenizer).spmByte)
}

// escapeSpaces replaces every ' ' with "▁".
func escapeSpaces(s string) string { return strings.ReplaceAll(s, " ", spmSpace) }
