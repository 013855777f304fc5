package engine

import "time"

// StopReason is why a turn ended.
type StopReason uint8

const (
	// StopNone: the turn did not reach a stop (it failed with an error).
	StopNone StopReason = iota
	// StopEOG: the sampler chose one of the model's end-of-generation ids.
	StopEOG
	// StopToken: the sampler chose one of GenerateConfig.StopTokens.
	StopToken
	// StopByPolicy: the StopPolicy decided StopKeep or StopTrim.
	StopByPolicy
	// StopMaxTokens: MaxTokens tokens were generated.
	StopMaxTokens
	// StopContext: the context filled before MaxTokens (Turn.ContextCapped).
	StopContext
	// StopCancelled: the CancelToken fired (Turn.Cause wraps ErrCancelled).
	StopCancelled
	// StopCallback: OnToken returned an error (Turn.Cause is that error).
	StopCallback
)

var stopNames = [...]string{
	StopNone:      "none",
	StopEOG:       "eog",
	StopToken:     "stop-token",
	StopByPolicy:  "stop-policy",
	StopMaxTokens: "max-tokens",
	StopContext:   "context",
	StopCancelled: "cancelled",
	StopCallback:  "callback",
}

// String returns the reason's name: "eog", "stop-token", "stop-policy",
// "max-tokens", "context", "cancelled", "callback", or "none".
func (r StopReason) String() string {
	if int(r) < len(stopNames) {
		return stopNames[r]
	}
	return "invalid"
}

// Turn is the result of Session.Generate.
//
// On an error Generate still returns the Turn so far (Stop is StopNone):
// Tokens, Text and Timings cover what ran before the failure.
type Turn struct {
	// Tokens is the prompt followed by the generated tokens (the final one
	// included, although it was never forwarded). Owned by the caller.
	Tokens []int32
	// Generated is the number of generated tokens at the end of Tokens,
	// end-of-generation and stop tokens included.
	Generated int
	// Reused is the number of prompt tokens the forward state already held
	// and that were not processed again (prefix reuse); 0 on a replay.
	Reused int
	// ContextCapped reports that the turn ended because the context filled:
	// the room left after the prompt was smaller than MaxTokens.
	ContextCapped bool
	// Stop is why the turn ended.
	Stop StopReason
	// Cause details StopCancelled (an error wrapping ErrCancelled) and
	// StopCallback (the callback's error); nil otherwise.
	Cause error
	// Seed is the seed the sampler was reset with (the random one when
	// GenerateConfig.Seed was nil).
	Seed uint64
	// UsedGPU is forward.ArchForward.OnGPU at the end of the turn.
	UsedGPU bool
	// Text is the text released during the turn: the concatenation of every
	// text given to OnToken (whether or not OnToken is set). It never holds a
	// trimmed stop, nor end-of-generation pieces.
	Text []byte
	// Logprobs has one entry per generated token when GenerateConfig.Logprobs
	// or TopLogprobs asked for it; nil otherwise.
	Logprobs []StepLogprobs
	// Timings measures where the turn spent its time.
	Timings Timings
	// Drafts counts speculative decoding's work (GenerateConfig.Draft).
	Drafts DraftStats
}

// DraftStats counts the drafts of a turn. Rejected drafts are Drafted -
// Accepted.
type DraftStats struct {
	// Drafted is the number of draft tokens verified; Accepted the number
	// of them the sampler chain chose.
	Drafted, Accepted int
	// Passes is the number of verify passes (forwards with one or more
	// draft rows); Rows their rows in all (the drafts and the token each
	// pass continues from).
	Passes, Rows int
}

// GeneratedTokens returns the generated part of Tokens (a view, not a copy).
func (t Turn) GeneratedTokens() []int32 { return t.Tokens[len(t.Tokens)-t.Generated:] }

// Timings is wall-clock time spent in the parts of a turn.
type Timings struct {
	// Prefill is the time of the prompt forward; PrefillTokens the number
	// of tokens it processed (the prompt less Reused).
	Prefill       time.Duration
	PrefillTokens int
	// Decode is the total time of the forwards after the prompt's;
	// DecodeForwards their number (one less than Generated when the turn
	// ran to a stop without drafts; fewer with accepted drafts).
	Decode         time.Duration
	DecodeForwards int
	// DecodeWall is the wall time of the decode phase, from the choice of
	// the first generated token to the end of the turn: forwards, policies,
	// drafting and OnToken together. DecodeTokens is the number of tokens
	// chosen in it (Generated less the first), so DecodeTokens/DecodeWall
	// compares plain and speculative turns.
	DecodeWall   time.Duration
	DecodeTokens int
	// Policies is the time inside the Sampler and the StopPolicy (Reset,
	// Sample, Accept, Check).
	Policies time.Duration
}

// StepLogprobs is one generated token's log-probability (natural log, from a
// log-softmax over the model's raw logits) and the most likely alternatives.
type StepLogprobs struct {
	Token   int32
	Logprob float32
	// Top holds the GenerateConfig.TopLogprobs most likely ids, most likely
	// first (ties: lower id first); it may or may not include Token.
	Top []TokenLogprob
}

// TokenLogprob is one id and its log-probability.
type TokenLogprob struct {
	Token   int32
	Logprob float32
}
