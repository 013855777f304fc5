package engine

// The Session keeps the turn's generated text in one buffer and a count of
// the bytes already streamed (released). These pure functions decide how far
// the released mark may move after a StopPolicy decision; they never move it
// backwards, because streamed text cannot be taken back.

// releaseEnd returns the new released mark after a Continue decision.
//
// text is the turn's generated text so far, released the bytes already
// streamed, hold the policy's Decision.HoldBack (bytes at the end of text
// that may still turn out to be a stop). The result excludes the held bytes
// and a trailing unfinished UTF-8 sequence, and is never below released.
func releaseEnd(text []byte, released, hold int) int {
	end := len(text) - clamp(hold, 0, len(text))
	if end <= released {
		return released
	}
	return released + completeUTF8Prefix(text[released:end])
}

// trimEnd returns the text length after a StopTrim decision removing trim
// bytes from the end of a text of textLen bytes, released of which were
// already streamed. trim is clamped to what was generated, and the text never
// shrinks below what was streamed.
func trimEnd(textLen, released, trim int) int {
	end := textLen - clamp(trim, 0, textLen)
	return max(end, released)
}

func clamp(v, lo, hi int) int { return min(max(v, lo), hi) }
