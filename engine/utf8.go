package engine

import "unicode/utf8"

// completeUTF8Prefix returns the length of the longest prefix of b that does
// not end inside an unfinished UTF-8 sequence: it cuts off a trailing lead
// byte and the continuation bytes that follow it when they are fewer than the
// lead byte announces. Bytes that can never become valid UTF-8 (a stray
// continuation byte, 0xff, an overlong lead) count as complete, so they are
// released rather than held for ever.
//
// A token piece may end in the middle of a character (byte-level BPE splits
// "é" = 0xc3 0xa9 across tokens); the Session streams only this prefix and
// keeps the rest until the next token completes it or the turn ends.
func completeUTF8Prefix(b []byte) int {
	// A UTF-8 sequence is at most utf8.UTFMax bytes, so only the last
	// UTFMax-1 bytes can belong to an unfinished one.
	for back := 1; back < utf8.UTFMax && back <= len(b); back++ {
		c := b[len(b)-back]
		if c < 0x80 {
			return len(b) // ASCII: nothing after it is a pending sequence
		}
		if !utf8.RuneStart(c) {
			continue // continuation byte: look further back for its lead
		}
		need := seqLen(c)
		if need > back {
			return len(b) - back // the lead announces more bytes than follow
		}
		return len(b)
	}
	return len(b)
}

// seqLen is the length a UTF-8 lead byte announces; 0 for bytes that cannot
// lead a valid sequence (0x80..0xc1, 0xf5..0xff).
func seqLen(lead byte) int {
	switch {
	case lead < 0x80:
		return 1
	case lead >= 0xc2 && lead <= 0xdf:
		return 2
	case lead >= 0xe0 && lead <= 0xef:
		return 3
	case lead >= 0xf0 && lead <= 0xf4:
		return 4
	}
	return 0
}
