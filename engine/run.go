package engine

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/realizar-host/realizar-host/forward"
)

// ErrRunFinished is returned by Run.Result called twice: the Turn was
// already handed out and the Session released.
var ErrRunFinished = errors.New("engine: run already finished")

// Run is one turn driven step by step, so that one driver can interleave
// the turns of many Sessions in shared batched passes (the server's
// batcher): Begin starts it, Next says which span to forward, Feed gives it
// that forward's logits (it polls the CancelToken, samples, applies the stop
// rules and streams through OnToken), and Result ends it. Session.Generate is
// the same loop over the Session's own forward.
//
// The Session is held from Begin until Result: other turns on it (Generate,
// Score, Begin) wait. Call Result exactly once, also after a failure.
//
// Whoever forwards the span must leave the Session's forward state holding
// tokens[:len(tokens)] afterwards, or report an error: Feed records that the
// state holds the span (resume only at exactly what the cache holds) and
// forgets everything after an error (a failed step leaves nothing held).
// A Run is not safe for concurrent use; its calls may come from different
// goroutines one after another.
type Run struct {
	r        *turnState
	finished bool
}

// Begin validates a turn and starts it: the same refusals as Generate
// (ErrBadConfig, ErrEmptyPrompt, forward.ErrBadToken, forward.ErrContextExceeded), returned
// before anything runs and without holding the Session. Then, holding the
// Session: a turn whose CancelToken is already cancelled ends at once
// (StopCancelled, no Reserve, no forward); otherwise the forward is reserved
// for len(prompt)+budget positions, the reusable prefix is found and the
// policies are reset. A Reserve or policy failure ends the Run at once: Next
// reports done and Result returns the error.
func (s *Session) Begin(prompt []int32, cfg GenerateConfig) (*Run, error) {
	s.mu.Lock()
	r, err := s.newTurn(prompt, cfg)
	if err != nil {
		s.mu.Unlock()
		return nil, err
	}
	r.begin()
	return &Run{r: r}, nil
}

// Session returns the Session the run holds.
func (x *Run) Session() *Session { return x.r.s }

// Next returns the span to forward next: tokens is the turn's whole token
// list (prompt and generated tokens, owned by the Run, read-only) and the
// forward processes tokens[start:] given that tokens[:start] are held, as
// forward.ArchForward.Forward's precondition says. ok is false when the turn has
// ended (a stop, a failure): call Result.
func (x *Run) Next() (tokens []int32, start int, ok bool) {
	r := x.r
	if r.done || x.finished {
		return nil, 0, false
	}
	r.drafts = r.drafts[:0]
	return r.turn.Tokens, r.start, true
}

// NextDraft is Next with the turn's drafts (GenerateConfig.Draft) after
// the turn's tokens: the forward processes tokens[start:] as a
// forward.Verifier does, and FeedRows takes the logits after every one of
// them. Without a drafter, during the prompt's span, or when the drafter
// proposes nothing, it returns Next's span (one row: FeedRows and Feed are
// then the same).
//
// Drafts are capped so that the turn's tokens never pass its budget.
func (x *Run) NextDraft() (tokens []int32, start int, ok bool) {
	tokens, start, ok = x.Next()
	r := x.r
	if !ok || r.cfg.Draft == nil || !r.prefilled {
		return tokens, start, ok
	}
	room := min(r.budget-r.turn.Generated-1, cap(tokens)-len(tokens))
	if room <= 0 {
		return tokens, start, ok
	}
	d := r.cfg.Draft.Draft(r.drafts[:0], tokens, room)
	n := r.s.vocab.Size()
	end := min(len(d), room)
	if i := slices.IndexFunc(d[:end], func(id int32) bool { return id < 0 || int(id) >= n }); i >= 0 {
		end = i
	}
	r.drafts = d[:end]
	// The drafts go after the turn's tokens, in the room reserved for the
	// tokens they stand for: an accepted draft is what will be appended
	// there anyway.
	return append(tokens, r.drafts...), start, true
}

// Drafts is the number of drafts at the end of the span NextDraft last
// returned (0 after Next, and for a span without drafts): a driver
// forwards a span with drafts as a verify pass.
func (x *Run) Drafts() int { return len(x.r.drafts) }

// Feed gives the run the result of forwarding the span Next returned: the
// logits after its last token ([n_vocab]float32, read during the call only)
// and the time the forward took (added to Timings.Prefill for the prompt's
// span and to Timings.Decode after), or the forward's error, which ends the
// turn with it (the Session then forgets what its forward holds); an error
// wrapping ErrCancelled (a driver that gave up on the span, e.g. between
// the chunks of a long prompt, after the turn's context ended) ends it as
// StopCancelled with that error as Cause, the forward state forgotten too.
// After a
// successful forward it runs one decode step: poll the CancelToken, sample,
// apply the stop rules, stream. Feed on an ended run does nothing.
func (x *Run) Feed(logits []float32, took time.Duration, err error) {
	r := x.r
	if r.done || x.finished {
		return
	}
	r.feed(logits, took, err)
}

// FeedRows gives the run the result of forwarding NextDraft's span as a
// forward.Verifier does: the logits after every row of tokens[start:]
// ([rows*n_vocab]float32, read during the call only), or the forward's
// error (as for Feed). A driver with room for fewer rows may forward only
// the first m (1 <= m <= rows: tokens[start:start+m]) and give their
// [m*n_vocab] logits: the drafts past them are dropped unverified (not
// counted as drafted), and the forward need hold no more than it ran. It runs one decode step per row in order, exactly as
// Feed would for each (poll the CancelToken, sample, apply the stop rules,
// stream), while the chosen token equals the row's draft: the first row
// whose choice differs (or whose token stops the turn) ends the pass, and
// the drafts after it are dropped. FeedRows after Next (no drafts) is Feed.
func (x *Run) FeedRows(logits []float32, took time.Duration, err error) {
	r := x.r
	if r.done || x.finished {
		return
	}
	r.feedRows(logits, took, err)
}

// Result ends the run and releases the Session: the Turn (Text is a copy of
// the released text) and the turn's error, as Generate returns them. A turn
// that had not ended is ended as if cancelled (StopCancelled, Cause
// ErrCancelled), releasing held text through OnToken. A second call returns
// ErrRunFinished.
func (x *Run) Result() (Turn, error) {
	if x.finished {
		return Turn{}, ErrRunFinished
	}
	r := x.r
	if !r.done {
		r.cancelled(ErrCancelled)
		r.end()
	}
	x.finished = true
	r.turn.Text = slices.Clone(r.text[:r.released])
	r.s.mu.Unlock()
	return r.turn, r.err
}

// begin runs what precedes the prompt's forward.
func (r *turnState) begin() {
	s, t := r.s, &r.turn
	prompt := t.Tokens
	if r.cfg.Cancel.Cancelled() { // nothing has run: no reserve, no forward
		t.Stop, t.Cause = StopCancelled, r.cfg.Cancel.Err()
		r.done = true
		return
	}
	if err := s.reserve(len(prompt) + r.budget); err != nil {
		r.fail(err)
		return
	}
	r.start = s.reusable(prompt)
	if r.cfg.Draft != nil {
		r.cfg.Draft.Reset(prompt)
	}
	if err := r.policy("sampler", r.sampler, func() error { return r.sampler.Reset(t.Seed, prompt) }); err != nil {
		r.fail(err)
		return
	}
	if r.stop != nil {
		if err := r.policy("stop policy", r.stop, r.stop.Reset); err != nil {
			r.fail(err)
			return
		}
	}
}

// feed records a forward's result and runs one decode step.
func (r *turnState) feed(logits []float32, took time.Duration, ferr error) {
	r.drafts = r.drafts[:0]
	r.feedRows(logits, took, ferr)
}

// feedRows records the result of forwarding the turn's tokens and r.drafts
// from r.start, and runs a decode step for each row in order while the
// chosen token is the row's draft.
func (r *turnState) feedRows(logits []float32, took time.Duration, ferr error) {
	s, t := r.s, &r.turn
	n := len(t.Tokens)
	drafts := r.drafts
	rows := len(drafts) + 1
	if v := s.vocab.Size(); ferr == nil && len(logits) >= v && len(logits) < rows*v && len(logits)%v == 0 {
		// The driver verified the first rows only (FeedRows).
		rows = len(logits) / v
		drafts = drafts[:rows-1]
		r.drafts = drafts
	}
	if ferr == nil && len(logits) != rows*s.vocab.Size() {
		ferr = fmt.Errorf("%d logits for %d rows of a vocabulary of %d: %w", len(logits), rows, s.vocab.Size(), forward.ErrBadLogits)
	}
	var last []float32
	if ferr == nil {
		last = logits[(rows-1)*s.vocab.Size():]
	}
	// t.Tokens[n:n+len(drafts)] are the drafts (NextDraft put them there).
	_, err := s.forwarded(t.Tokens[:n+len(drafts)], r.start, last, ferr)
	if !r.prefilled {
		t.Timings.Prefill, t.Timings.PrefillTokens = took, n-r.start
		r.prefilled = true
		if err == nil {
			t.Reused = r.start
		}
	} else {
		t.Timings.Decode += took
		if err == nil {
			t.Timings.DecodeForwards++
		}
	}
	if err != nil {
		if errors.Is(ferr, ErrCancelled) {
			r.cancelled(ferr)
			r.end()
			return
		}
		r.fail(err)
		return
	}
	if len(drafts) > 0 {
		t.Drafts.Passes++
		t.Drafts.Rows += rows
		t.Drafts.Drafted += len(drafts)
	}
	accepted := 0
	defer func() {
		if len(drafts) > 0 {
			t.Drafts.Accepted += accepted
			r.cfg.Draft.Accepted(len(drafts), accepted)
		}
	}()
	v := s.vocab.Size()
	for i := range rows {
		// The drafts in t.Tokens after this row are about to be
		// overwritten by the chosen tokens (or cut off).
		t.Tokens = t.Tokens[:n+i]
		goOn := r.step(logits[i*v : (i+1)*v])
		hit := i < len(drafts) && len(t.Tokens) == n+i+1 && t.Tokens[n+i] == drafts[i]
		if hit {
			accepted++
		}
		if !goOn {
			return
		}
		if !hit {
			break
		}
	}
	r.start = len(t.Tokens) - 1
}

// step runs one decode step on logits, the logits after the turn's last
// token: poll the CancelToken, sample, apply the stop rules, stream. It
// reports whether the turn goes on.
func (r *turnState) step(logits []float32) bool {
	t := &r.turn
	if r.decoding {
		t.Timings.DecodeTokens++
	}
	if r.cfg.Cancel.Poll() {
		r.cancelled(r.cfg.Cancel.Err())
		r.end()
		return false
	}
	id, err := r.sample(logits)
	if err != nil {
		r.fail(err)
		return false
	}
	t.Tokens = append(t.Tokens, id)
	t.Generated++
	reason, err := r.decide(id)
	if err != nil {
		r.fail(err)
		return false
	}
	if reason != StopNone {
		t.Stop = reason
		r.end()
		return false
	}
	if !r.decoding {
		// The decode phase starts once the prompt's token is chosen.
		r.decoding, r.decodeStart = true, time.Now()
	}
	return true
}

// cancelled ends the turn as cancelled by cause, releasing held text.
func (r *turnState) cancelled(cause error) {
	t := &r.turn
	t.Stop, t.Cause = StopCancelled, cause
	if rest := r.releaseAll(); len(rest) > 0 && r.cfg.OnToken != nil {
		if err := r.cfg.OnToken(NoToken, rest); err != nil {
			t.Stop, t.Cause = StopCallback, err
		}
	}
}

// end marks a turn that reached a stop reason.
func (r *turnState) end() {
	r.done = true
	r.endDecode()
	r.turn.ContextCapped = r.turn.Stop == StopContext
	r.turn.UsedGPU = r.s.fwd.OnGPU()
}

// fail ends the turn with err (Stop stays StopNone).
func (r *turnState) fail(err error) {
	r.done, r.err = true, err
	r.endDecode()
}

// endDecode closes the decode phase's wall time.
func (r *turnState) endDecode() {
	if r.decoding {
		r.turn.Timings.DecodeWall = time.Since(r.decodeStart)
		r.decoding = false
	}
}
