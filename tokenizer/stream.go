package tokenizer

import "unicode/utf8"

// Pieces is what a Stream needs of a vocabulary: the raw bytes of a token
// (engine.Vocab and *Tokenizer satisfy it).
type Pieces interface {
	Piece(id int32) []byte
}

// Stream turns token ids, one at a time, into text that is always valid
// UTF-8. A token may end in the middle of a multi-byte character (byte
// fallback, byte-level BPE); Stream holds such an incomplete sequence back
// until a later token completes it. Bytes that can never become valid UTF-8
// are emitted as U+FFFD, one per byte.
//
// The zero value is not usable; call NewStream. A Stream is not safe for
// concurrent use.
type Stream struct {
	vocab   Pieces
	pending []byte
	out     []byte
}

// NewStream returns a Stream over vocab's pieces.
func NewStream(vocab Pieces) *Stream { return &Stream{vocab: vocab} }

// Add appends token id's piece and returns the text that is now complete
// (possibly empty). The returned slice is valid until the next call.
func (s *Stream) Add(id int32) []byte {
	return s.Write(s.vocab.Piece(id))
}

// Write is Add for raw bytes.
func (s *Stream) Write(piece []byte) []byte {
	s.pending = append(s.pending, piece...)
	s.out = s.out[:0]
	i := 0
	for i < len(s.pending) {
		rest := s.pending[i:]
		if rest[0] < utf8.RuneSelf {
			s.out = append(s.out, rest[0])
			i++
			continue
		}
		if !utf8.FullRune(rest) {
			break // a valid prefix of a longer sequence: wait for more bytes
		}
		r, n := utf8.DecodeRune(rest)
		if r == utf8.RuneError && n == 1 {
			s.out = utf8.AppendRune(s.out, utf8.RuneError)
		} else {
			s.out = append(s.out, rest[:n]...)
		}
		i += n
	}
	s.pending = append(s.pending[:0], s.pending[i:]...)
	return s.out
}

// Pending is the number of bytes held back.
func (s *Stream) Pending() int { return len(s.pending) }

// Flush returns what is held back, each byte as U+FFFD (it can no longer be
// completed), and empties the Stream. The returned slice is valid until the
// next call.
func (s *Stream) Flush() []byte {
	s.out = s.out[:0]
	for range s.pending {
		s.out = utf8.AppendRune(s.out, utf8.RuneError)
	}
	s.pending = s.pending[:0]
	return s.out
}

// Reset drops anything held back.
func (s *Stream) Reset() { s.pending = s.pending[:0] }
