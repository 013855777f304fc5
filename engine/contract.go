package engine

// This file is the contract between the decode loop and the policies and
// vocabulary it drives: host/ (plugins), native test policies, tokenizer/,
// and the draft sources of speculative decoding. The forward it drives is
// forward.ArchForward. Implementations live in other packages; engine
// imports none of them.

// Drafter proposes the tokens a turn is likely to generate next: the draft
// source of speculative decoding (a predicted output, a lookup over the
// sequence's own text, a draft model). The Session verifies a draft with
// one forward.Verifier pass and keeps each draft token only when the turn's
// own sampler chain, run as a plain step runs it, chose that token, so a
// Drafter changes how fast a turn runs and never what it generates.
//
// A Drafter serves one sequence; it must draw on nothing another tenant
// wrote. It is called by one Session at a time.
type Drafter interface {
	// Reset starts a turn from prompt (the whole token list the turn
	// starts from; not retained).
	Reset(prompt []int32)
	// Draft appends up to max tokens that may follow tokens (the turn's
	// prompt and the tokens generated so far; read-only, not retained) to
	// dst and returns it. max >= 1. Ids outside the vocabulary end the
	// draft where they appear.
	Draft(dst, tokens []int32, max int) []int32
	// Accepted reports the outcome of the last non-empty draft: accepted of
	// its drafted tokens were chosen (the leading ones; 0 <= accepted <=
	// drafted). A drafter adapts its draft length to it.
	Accepted(drafted, accepted int)
}

// DraftPeeker is a Drafter that can also tell the first token its next
// draft would hold without drafting it: no draft length spent, no paused
// call counted, nothing a later Draft or Accepted sees changed. A driver
// that runs a step without drafts (a batched pass too full for them) peeks
// and compares the peeked token with the one the step chose: the drafter's
// acceptance, measured for free, which decides when drafts pay again.
type DraftPeeker interface {
	Drafter
	// Peek returns the token a draft after tokens (as Draft's) would start
	// with; ok is false where the drafter would draft nothing from its
	// text (a paused drafter still peeks).
	Peek(tokens []int32) (id int32, ok bool)
}

// Pieces renders token ids as the bytes a turn's text is made of.
type Pieces interface {
	// Piece is the bytes token id adds to the text (possibly a partial
	// UTF-8 sequence, possibly none); nil for ids out of range. The caller
	// must not modify it.
	Piece(id int32) []byte
}

// Vocab is what the Session needs of a tokenizer. Its Piece renders the
// turns' text unless GenerateConfig.Pieces does: give a tokenizer's
// Renderer (control tokens as nothing, as llama.cpp shows generated text)
// rather than its raw pieces for text a user reads.
type Vocab interface {
	Pieces
	// IsEOG reports whether id ends a turn (eos, eot, <|im_end|> ...).
	IsEOG(id int32) bool
	// Size is n_vocab; valid ids are 0 <= id < Size().
	Size() int
}

// Sampler chooses the next token. A chain of logits processors followed by a
// sampler is itself a Sampler.
//
// The Session calls Reset once per turn, then for every decode step Sample,
// and Accept for each token that joins the context. Sample may modify logits
// in place (it is a scratch copy owned by the Session for the duration of the
// call) and must not retain it. A returned id outside [0, n_vocab) is turned
// into forward.ErrBadToken by the Session.
//
// Every error (a WebAssembly trap, a timeout, a bad id) ends the turn with a
// *PolicyError naming the sampler (see Named); the next turn calls Reset
// again. Reset returns an error because a plugin's reset can trap too.
type Sampler interface {
	// Reset starts a turn. seed is the turn's 64-bit seed; prompt is the full
	// token list the turn starts from (not retained).
	Reset(seed uint64, prompt []int32) error
	// Sample returns the chosen token id for logits, [n_vocab]float32.
	Sample(logits []float32) (int32, error)
	// Accept records that token joined the context. The Session calls it
	// right after every successful Sample, end-of-generation and stop tokens
	// included (they join Turn.Tokens).
	Accept(token int32)
}

// StopAction is what a StopPolicy decided for one token.
type StopAction uint8

const (
	// Continue generating.
	Continue StopAction = iota
	// StopKeep stops after this token, keeping all of its text.
	StopKeep
	// StopTrim stops and removes the last Decision.Trim bytes of the
	// generated text (this token's piece included).
	StopTrim
)

// String returns "continue", "stop-keep" or "stop-trim".
func (a StopAction) String() string {
	switch a {
	case Continue:
		return "continue"
	case StopKeep:
		return "stop-keep"
	case StopTrim:
		return "stop-trim"
	}
	return "invalid"
}

// Decision is a StopPolicy's answer for one token. The zero value is
// Continue with nothing held back.
//
// HoldBack is meaningful with Continue: the last HoldBack bytes of the
// turn's generated text (a possible partial match) must not be released yet.
// Each Decision replaces the previous one, so a policy reports the whole
// unresolved tail every time, not an increment.
// Trim is meaningful with StopTrim: bytes removed from the end of the
// generated text. Both are counts of bytes and are clamped by the Session to
// the text generated in this turn; text already released (streamed) is never
// taken back, so a policy that trims must have held those bytes back.
//
// When the turn ends (a stop, end-of-generation, the budget, cancellation)
// whatever is still held is released, except what StopTrim removed.
type Decision struct {
	Action   StopAction
	Trim     int
	HoldBack int
}

// StopPolicy decides when generation stops, from token ids and their bytes.
// Errors end the turn with a *PolicyError naming the policy (see Named).
type StopPolicy interface {
	// Reset starts a turn. It returns an error because a plugin's reset can
	// trap.
	Reset() error
	// Check is called for every chosen token that is not end-of-generation
	// (nor one of GenerateConfig.StopTokens); piece is its raw bytes, possibly
	// part of a UTF-8 character (not retained). The turn's generated text is
	// the concatenation of the pieces checked since Reset.
	Check(token int32, piece []byte) (Decision, error)
}
