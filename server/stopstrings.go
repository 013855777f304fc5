package server

import (
	"bytes"

	"github.com/realizar-host/realizar-host/engine"
)

// StopStrings is a native engine.StopPolicy for OpenAI's stop field: the
// turn stops at the first occurrence of any of the strings, which is
// trimmed from the text, and a possible partial match at the end of the
// text is held back so that a stop string never reaches a stream.
//
// It keeps only the last maxLen-1 bytes of text before each piece (an
// occurrence must end within the new piece), so its memory is bounded.
type StopStrings struct {
	stops  [][]byte
	maxLen int
	tail   []byte
}

// NewStopStrings returns a StopStrings for stops (empty strings are ignored).
func NewStopStrings(stops []string) *StopStrings {
	s := &StopStrings{}
	for _, x := range stops {
		if x != "" {
			s.stops = append(s.stops, []byte(x))
			s.maxLen = max(s.maxLen, len(x))
		}
	}
	return s
}

// Name implements engine.Named.
func (s *StopStrings) Name() string { return "stop strings" }

// Reset implements engine.StopPolicy.
func (s *StopStrings) Reset() error { s.tail = s.tail[:0]; return nil }

// Check implements engine.StopPolicy.
func (s *StopStrings) Check(_ int32, piece []byte) (engine.Decision, error) {
	s.tail = append(s.tail, piece...)
	if at := s.firstMatch(); at >= 0 {
		return engine.Decision{Action: engine.StopTrim, Trim: len(s.tail) - at}, nil
	}
	hold := s.partial()
	if keep := max(s.maxLen-1, 0); len(s.tail) > keep {
		s.tail = append(s.tail[:0], s.tail[len(s.tail)-keep:]...)
	}
	return engine.Decision{HoldBack: hold}, nil
}

// firstMatch is the earliest offset in tail where a stop string starts, or -1.
func (s *StopStrings) firstMatch() int {
	best := -1
	for _, x := range s.stops {
		if i := bytes.Index(s.tail, x); i >= 0 && (best < 0 || i < best) {
			best = i
		}
	}
	return best
}

// partial is the length of the longest suffix of tail that is a proper
// prefix of a stop string.
func (s *StopStrings) partial() int {
	best := 0
	for _, x := range s.stops {
		for n := min(len(x)-1, len(s.tail)); n > best; n-- {
			if bytes.HasSuffix(s.tail, x[:n]) {
				best = n
				break
			}
		}
	}
	return best
}
