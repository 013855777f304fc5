package grammar

import (
	"errors"
	"strings"
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

// RuleError is a well-formed grammar whose rules cannot be used as
// written: a rule used but not defined, or no root rule (ErrUndefinedRule),
// or a rule that reaches itself before matching a byte (ErrLeftRecursion).
// Line and Col (1-based, in bytes) are where the fault is seen: the use of
// the undefined rule, the definition of the left-recursive rule (the one
// the text defines, for a cycle through a group or a repetition inside
// it), the first rule defined when there is no root.
type RuleError struct {
	Line, Col int
	Rule      string // the rule at fault ("root" when it is missing)
	Msg       string
	Err       error // ErrUndefinedRule or ErrLeftRecursion
}

func (e *RuleError) Error() string {
	return sprintf("grammar: line %d, column %d: %s: %s", e.Line, e.Col, strings.TrimPrefix(e.Err.Error(), "grammar: "), e.Msg)
}

// Unwrap returns ErrUndefinedRule or ErrLeftRecursion.
func (e *RuleError) Unwrap() error { return e.Err }
