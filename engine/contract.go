package engine

// This file is the contract between the decode loop and everything it drives:
// forwards (model/, cuda/), policies (host/, native test policies) and the
// vocabulary (tokenizer/). Implementations live in other packages; engine
// imports none of them.

// ArchForward is a model forward pass that the Session drives.
//
// Precondition of Forward: the forward's state holds tokens[:start] as its
// first start positions (the KV cache covers positions 0..start-1; it may
// hold more positions, which the call discards and overwrites). start == 0
// means reset and process all of tokens. Forward returns the logits after the last token of tokens,
// a []float32 of length Vocab.Size(); the slice is valid until the next call.
// After a Forward error the state is unknown: the caller's next Forward must
// start from 0 (the Session does so).
//
// An ArchForward is driven by one Session and need not be safe for
// concurrent use.
//
// It holds what the Session calls; StepForward, the implementation over a
// TokenStep, adds what its owners read (Arch, Notices, BatchedPrefills,
// Held).
type ArchForward interface {
	// OnGPU reports whether logits currently come from a GPU backend.
	OnGPU() bool
	// ContextLength is the number of positions the forward can hold.
	ContextLength() int
	// Reserve sizes the state for positions tokens (the Session calls it once
	// per turn with len(prompt)+budget, before any Forward). dropped reports
	// that the held state was discarded (the caller must then forward from
	// 0). positions > ContextLength() is an error wrapping ErrContextExceeded.
	Reserve(positions int) (dropped bool, err error)
	// Forward processes tokens[start:] given that tokens[:start] are held.
	Forward(tokens []int32, start int) (logits []float32, err error)
}

// VerifyForward is an optional ArchForward capability: the verify pass of
// speculative decoding. Verify has Forward's precondition and processes
// tokens[start:] as rows at consecutive positions, returning the logits
// after every row: [n*n_vocab]float32 for n = len(tokens)-start, row i
// bit-identical to what Forward(tokens[:start+i+1], start+i) returns after
// the rows before it, valid until the next call. The state holds all of
// tokens afterwards; a caller that rejects a suffix resumes before it (the
// positions after what it resumes at are discarded and overwritten). After
// an error the state is unknown, as after Forward's.
//
// The Session drafts only on a forward that has it (see Drafter).
type VerifyForward interface {
	Verify(tokens []int32, start int) (logits []float32, err error)
}

// Drafter proposes the tokens a turn is likely to generate next: the draft
// source of speculative decoding (a predicted output, a lookup over the
// sequence's own text, a draft model). The Session verifies a draft with
// one VerifyForward pass and keeps each draft token only when the turn's
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

// TokenStep is the per-token forward of a quantized model. StepForward adapts it
// to ArchForward.
//
// Step processes token at position (0-based) and returns the logits after it,
// [n_vocab]float32, valid until the next call. A Step at position p requires
// positions 0..p-1 to have been stepped since the last Reset. Reset forgets
// every position. After a Step error the caller resets before stepping again
// (StepForward does).
type TokenStep interface {
	Reset()
	Step(token int32, position int) ([]float32, error)
}

// Prefiller is an optional TokenStep capability: a batched pass over
// tokens[start:] (positions start..len(tokens)-1) returning the logits after
// the last token. Same precondition as ArchForward.Forward.
type Prefiller interface {
	Prefill(tokens []int32, start int) ([]float32, error)
}

// Verifier is an optional TokenStep capability: the verify pass of
// speculative decoding. Verify processes tokens[start:] (positions
// start..len(tokens)-1, same precondition as Prefill) and returns the
// logits after every one of them, [n*n_vocab]float32 for n =
// len(tokens)-start, row i bit-identical to what Step(tokens[start+i],
// start+i) returns after the rows before it were stepped; valid until the
// step's next call. A step without it is verified Step by Step.
type Verifier interface {
	Verify(tokens []int32, start int) ([]float32, error)
}

// Reserver is an optional TokenStep capability: size the KV cache for
// positions. dropped reports that the held positions were discarded (the
// cache was reallocated).
type Reserver interface {
	Reserve(positions int) (dropped bool, err error)
}

// BackendReporter is an optional TokenStep capability naming its backend
// ("cpu", "cuda") and whether it runs on a GPU now; a step that falls back to
// the CPU reports so from then on.
type BackendReporter interface {
	Backend() (name string, onGPU bool)
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
// into ErrBadToken by the Session.
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
