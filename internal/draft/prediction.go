package draft

import (
	"slices"

	"github.com/realizar-host/realizar-host/engine"
)

// PredictionOptions configures NewPrediction. The zero value is the
// defaults.
type PredictionOptions struct {
	// MaxDraft is the longest draft (default DefaultPredictionDraft).
	MaxDraft int
	// Window is how far from where the prediction was expected to resume a
	// one-token match may re-align it (default 32 tokens); a match of two
	// or more tokens re-aligns it anywhere.
	Window int
}

// DefaultPredictionDraft is Prediction's longest draft when none is given:
// MaxDraft, 32 tokens (a predicted answer is accepted in long runs; the
// expected-gain rule drafts less where it is not).
const DefaultPredictionDraft = MaxDraft

// maxAlign is the longest suffix of the output compared when re-aligning.
const maxAlign = 16

// Prediction drafts a predicted output (OpenAI's Predicted Outputs): the
// tokens of the answer the caller expects, such as the file an edit
// rewrites. It follows the turn's output through the prediction: while the
// output agrees, the drafts are the prediction's next tokens; after a
// departure (an edit inserts, deletes or replaces text) it re-aligns where
// the output's latest tokens occur in the prediction — the longest match,
// the nearest to where it was expected on a tie, a one-token match only
// within Window of it — and otherwise assumes a replaced token and steps
// past it. The first departure after a run of agreeing tokens is taken for
// a replaced token unless a match longer than the run says otherwise. Its
// draft length adapts as Lookup's does (length's expected gain: a replaced
// token costs the rest of one draft, not the length of the next ones),
// pauses after drafts of which nothing was accepted included, so a
// prediction unlike the answer costs few verify rows.
//
// The prediction belongs to one request; a Prediction serves its turn.
// Not safe for concurrent use.
type Prediction struct {
	pred   []int32
	window int
	length length

	prompt int // the turn's prompt length: the output starts there
	seen   int // output tokens followed so far
	cursor int // index in pred of the token expected next
	run    int // output tokens in a row, up to seen, that agreed with pred
}

var _ engine.DraftPeeker = (*Prediction)(nil)

// NewPrediction returns a Prediction of tokens (copied).
func NewPrediction(tokens []int32, opts PredictionOptions) *Prediction {
	if opts.MaxDraft <= 0 {
		opts.MaxDraft = DefaultPredictionDraft
	}
	if opts.Window <= 0 {
		opts.Window = 32
	}
	return &Prediction{pred: slices.Clone(tokens), window: opts.Window, length: newLength(opts.MaxDraft, 0, true)}
}

// Reset starts a turn from prompt: the output follows it.
func (d *Prediction) Reset(prompt []int32) {
	d.length.Reset()
	d.prompt, d.seen, d.cursor, d.run = len(prompt), 0, 0, 0
}

// Accepted adapts the draft length.
func (d *Prediction) Accepted(drafted, accepted int) { d.length.Accepted(drafted, accepted) }

// Draft follows the output generated since the last call and appends the
// prediction's next tokens from where it resumes.
func (d *Prediction) Draft(dst, tokens []int32, limit int) []int32 {
	if !d.follow(tokens) {
		return dst
	}
	k := d.length.Next(limit)
	if k == 0 || d.cursor >= len(d.pred) {
		return dst
	}
	return append(dst, d.pred[d.cursor:min(d.cursor+k, len(d.pred))]...)
}

// Peek returns the prediction's token where it resumes after tokens
// (engine.DraftPeeker). It follows the output as Draft does (what the next
// Draft would do first, with the same result), and spends no length.
func (d *Prediction) Peek(tokens []int32) (int32, bool) {
	if !d.follow(tokens) || d.cursor >= len(d.pred) {
		return 0, false
	}
	return d.pred[d.cursor], true
}

// follow moves the cursor through the output in tokens generated since
// the last call; false when tokens is shorter than the turn's prompt.
func (d *Prediction) follow(tokens []int32) bool {
	if len(tokens) < d.prompt {
		return false
	}
	out := tokens[d.prompt:]
	for ; d.seen < len(out); d.seen++ {
		if d.cursor < len(d.pred) && d.pred[d.cursor] == out[d.seen] {
			d.cursor++
			d.run++
			continue
		}
		d.cursor = d.realign(out[:d.seen+1], d.cursor, d.run)
		d.run = 0
	}
	return true
}

// realign returns where the prediction resumes after out, whose last token
// departed from pred[expected] after run tokens that agreed with it: the
// index after the longest match of out's suffix in pred (the nearest to
// expected+1 among equals; a one-token match only within the window),
// else expected+1 (a replaced token). A first departure after an agreeing
// run is taken for a replaced token unless a match longer than the run
// (up to maxAlign) says otherwise: the run is evidence of the alignment,
// and a one-token match nearby (a word the text repeats) is not — taking
// it cost every later draft until the next departure re-aligned.
func (d *Prediction) realign(out []int32, expected, run int) int {
	guess := min(expected+1, len(d.pred))
	best, bestLen, bestDist := guess, min(run, maxAlign), 0
	for i := 1; i <= len(d.pred); i++ {
		l := 0
		for l < maxAlign && l < i && l < len(out) && d.pred[i-1-l] == out[len(out)-1-l] {
			l++
		}
		if l == 0 {
			continue
		}
		dist := abs(i - guess)
		if l == 1 && dist > d.window {
			continue
		}
		if l > bestLen || (l == bestLen && dist < bestDist) {
			best, bestLen, bestDist = i, l, dist
		}
	}
	return best
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
