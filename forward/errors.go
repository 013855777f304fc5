package forward

import "errors"

// Sentinel errors. Every layer wraps them with %w, so callers test with
// errors.Is.
var (
	// ErrBadToken: a token id < 0 or >= the vocabulary size (one given to a
	// forward, or one a policy returned to the decode loop).
	ErrBadToken = errors.New("forward: token id out of range")
	// ErrContextExceeded: the tokens do not fit the context (a prompt of
	// ContextLength() tokens or more, a Reserve past it).
	ErrContextExceeded = errors.New("forward: context length exceeded")
	// ErrBadLogits: a forward returned no logits, or logits whose length is
	// not the vocabulary size.
	ErrBadLogits = errors.New("forward: bad logits")
	// ErrBadOptions: a Options value is out of range (a non-positive
	// ModelContext, a negative MaxContext) or NewSequenceForward got no step.
	ErrBadOptions = errors.New("forward: invalid options")
)
