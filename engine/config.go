package engine

import (
	"fmt"
	"slices"

	"github.com/realizar-host/realizar-host/forward"
)

// GenerateConfig is the settings of one turn. The zero value is not valid:
// MaxTokens must be set. The Session validates it once, at the start of
// Generate; a bad value is an error wrapping ErrBadConfig and nothing runs.
type GenerateConfig struct {
	// MaxTokens is the most tokens the turn generates; it must be > 0. The
	// turn may stop earlier when the context fills (Turn.ContextCapped).
	MaxTokens int

	// Seed is the turn's sampling seed. nil means a random one, which is
	// reported in Turn.Seed so that the turn can be reproduced.
	Seed *uint64

	// StopTokens are ids that end the turn like the model's end-of-generation
	// ids (StopToken). Each must be a valid id. Their pieces are not streamed.
	StopTokens []int32

	// IgnoreEOG masks the model's end-of-generation ids (logit -Inf in the
	// sampler's copy) so the turn runs on to MaxTokens, the context or a stop.
	// StopTokens still stop.
	IgnoreEOG bool

	// Logprobs records, per generated token, its log-probability under the
	// model's raw logits (before any sampler processing) in Turn.Logprobs.
	Logprobs bool

	// TopLogprobs also records the TopLogprobs most likely alternatives per
	// step (implies Logprobs). 0 <= TopLogprobs <= vocabulary size.
	TopLogprobs int

	// OnLogprobs, when set with Logprobs or TopLogprobs, receives each
	// step's StepLogprobs (the same value appended to Turn.Logprobs) right
	// after the token is chosen, before the OnToken call for that token.
	// Text held back by the stop policy or unfinished UTF-8 reaches OnToken
	// later, so a streaming caller pairs the two by queueing these. Top
	// aliases nothing of the Session's and may be kept.
	OnLogprobs func(step StepLogprobs)

	// Cancel stops the turn when cancelled; nil means never. Use
	// FromContext(ctx) to cancel with a context.
	Cancel *CancelToken

	// OnToken, when set, receives each chosen token and the text that became
	// releasable with it: stop-policy hold-back and unfinished UTF-8 are kept
	// until resolved, and an end-of-generation or stop token's own piece is
	// never streamed (its call carries only text released at the end of the
	// turn, often none). If the turn ends without a token to carry held text
	// (cancellation), a last call has id NoToken.
	//
	// A non-nil error stops the turn (StopCallback, Turn.Cause = the error);
	// no further calls follow.
	//
	// # Notes
	//
	// text aliases the Session's buffer and is valid only during the call;
	// copy it to keep it.
	OnToken func(id int32, text []byte) error

	// Sampler chooses the tokens of this turn; nil means the Session's
	// (WithSampler). A turn needs one or the other.
	Sampler Sampler

	// Pieces renders this turn's tokens: the bytes each adds to Turn.Text,
	// to OnToken's text and to what the stop policy checks. nil means the
	// Session's Vocab. A server sets it per request, for instance to render
	// the control tokens a tool-call parser must see.
	Pieces Pieces

	// Draft proposes tokens for speculative decoding; nil means none. Used
	// only when the Session's forward is a forward.Verifier (the Session's
	// Generate) or the driver forwards Run.NextDraft's rows. The turn's
	// tokens, text, logprobs, stop and the policies' calls are those of
	// the same turn without it. The caller owns it; the Session resets it
	// at the start of the turn.
	Draft Drafter

	// Stop decides stops from the text of this turn; nil means the Session's
	// (WithStopPolicy), which may be none: the turn then ends only on
	// end-of-generation, StopTokens, the budget, cancellation or the callback.
	Stop StopPolicy
}

// NoToken is the id of the OnToken call that releases held text when a turn
// ends without a token (on cancellation).
const NoToken int32 = -1

// validate checks c against a vocabulary of vocabSize ids.
func (c *GenerateConfig) validate(vocabSize int) error {
	if c.MaxTokens <= 0 {
		return fmt.Errorf("%w: MaxTokens is %d, must be > 0", ErrBadConfig, c.MaxTokens)
	}
	if c.TopLogprobs < 0 || c.TopLogprobs > vocabSize {
		return fmt.Errorf("%w: TopLogprobs is %d, must be in [0, %d]", ErrBadConfig, c.TopLogprobs, vocabSize)
	}
	if i := slices.IndexFunc(c.StopTokens, func(id int32) bool { return id < 0 || int(id) >= vocabSize }); i >= 0 {
		return fmt.Errorf("%w: StopTokens[%d] = %d is outside the vocabulary [0, %d): %w",
			ErrBadConfig, i, c.StopTokens[i], vocabSize, forward.ErrBadToken)
	}
	return nil
}
