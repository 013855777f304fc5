package enginetest

import (
	"bytes"

	"github.com/realizar-host/realizar-host/engine"
)

// StringsStop is the reference stop-string policy: it stops at the first
// occurrence of any of its strings in the turn's text, even when the string
// is split across tokens or begins inside a multi-byte character, trims the
// string and anything after it (StopTrim), and meanwhile holds back the
// longest end of the text that could still become a stop (HoldBack).
type StringsStop struct {
	stops [][]byte
	text  []byte
}

// NewStringsStop returns a policy stopping at any of stops; empty strings
// are ignored.
func NewStringsStop(stops ...string) *StringsStop {
	s := &StringsStop{}
	for _, st := range stops {
		if st != "" {
			s.stops = append(s.stops, []byte(st))
		}
	}
	return s
}

// Name is "strings".
func (s *StringsStop) Name() string { return "strings" }

// Reset forgets the turn's text.
func (s *StringsStop) Reset() error {
	s.text = s.text[:0]
	return nil
}

// Check appends piece to the text and decides.
func (s *StringsStop) Check(_ int32, piece []byte) (engine.Decision, error) {
	from := len(s.text)
	s.text = append(s.text, piece...)
	if at, ok := findStop(s.text, from, s.stops); ok {
		return engine.Decision{Action: engine.StopTrim, Trim: len(s.text) - at}, nil
	}
	return engine.Decision{Action: engine.Continue, HoldBack: partialStop(s.text, s.stops)}, nil
}

// FindStop returns the start of the earliest occurrence in text of any stop
// that ends after text[:from] (text[:from] is known to hold none), and
// whether there is one.
func findStop(text []byte, from int, stops [][]byte) (at int, ok bool) {
	at = len(text)
	for _, st := range stops {
		lo := max(0, from-len(st)+1)
		if i := bytes.Index(text[lo:], st); i >= 0 && lo+i < at {
			at, ok = lo+i, true
		}
	}
	return at, ok
}

// partialStop returns the length of the longest end of text that is a
// proper prefix of some stop: the bytes to hold back because the next token
// may complete a stop.
func partialStop(text []byte, stops [][]byte) int {
	best := 0
	for _, st := range stops {
		for n := min(len(st)-1, len(text)); n > best; n-- {
			if bytes.HasSuffix(text, st[:n]) {
				best = n
				break
			}
		}
	}
	return best
}

// MaxTokens is the reference max-tokens stop policy: StopKeep on the N-th
// checked token.
type MaxTokens struct {
	N    int
	seen int
}

// Name is "max-tokens".
func (m *MaxTokens) Name() string { return "max-tokens" }

// Reset restarts the count.
func (m *MaxTokens) Reset() error {
	m.seen = 0
	return nil
}

// Check counts the token and stops on the N-th.
func (m *MaxTokens) Check(int32, []byte) (engine.Decision, error) {
	m.seen++
	if m.seen >= m.N {
		return engine.Decision{Action: engine.StopKeep}, nil
	}
	return engine.Decision{Action: engine.Continue}, nil
}
