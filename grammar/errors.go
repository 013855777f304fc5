package grammar

import (
	"errors"
)

// Errors returned by this package; match them with errors.Is.
var (
	// ErrSyntax is wrapped by every *SyntaxError.
	ErrSyntax = errors.New("grammar: syntax error")
	// ErrUndefinedRule: a rule is referenced but never defined, or root is missing.
	ErrUndefinedRule = errors.New("grammar: undefined rule")
	// ErrLeftRecursion: a rule can reach itself without consuming a byte.
	ErrLeftRecursion = errors.New("grammar: left recursion")
	// ErrTooLarge: the grammar passes a compile-time cap.
	ErrTooLarge = errors.New("grammar: too large")
	// ErrUnsupported: a construct this engine does not enforce.
	ErrUnsupported = errors.New("grammar: unsupported")
	// ErrRejected: Accept was given a token the grammar does not allow here.
	ErrRejected = errors.New("grammar: token rejected")
	// ErrTrigger: a lazy grammar's triggers are missing, too many or of a
	// bad length (NewLazy).
	ErrTrigger = errors.New("grammar: bad trigger")
)

// SyntaxError is a malformed GBNF grammar: the 1-based line and column
// (in bytes) of the first problem and what was expected there.
type SyntaxError struct {
	Line, Col int
	Msg       string
}

func (e *SyntaxError) Error() string {
	return sprintf("grammar: line %d, column %d: %s", e.Line, e.Col, e.Msg)
}

// Unwrap makes errors.Is(err, ErrSyntax) true.
func (e *SyntaxError) Unwrap() error { return ErrSyntax }
