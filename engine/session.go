package engine

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/realizar-host/realizar-host/forward"
)

// Named is an optional capability of a Sampler or StopPolicy: the name used
// in a PolicyError ("sampler standard"). Without it the PolicyError names
// the role alone ("sampler"), and the error it wraps names the rest (a
// plugin's host.PluginError names the plugin).
type Named interface {
	Name() string
}

// Option configures a Session (NewSession).
type Option func(*Session)

// WithSampler sets the Session's default sampler, used by turns whose
// GenerateConfig.Sampler is nil. The Session owns it: Close closes it if it
// implements io.Closer.
func WithSampler(s Sampler) Option { return func(x *Session) { x.sampler = s } }

// WithStopPolicy sets the Session's default stop policy, used by turns whose
// GenerateConfig.Stop is nil. The Session owns it: Close closes it if it
// implements io.Closer.
func WithStopPolicy(p StopPolicy) Option { return func(x *Session) { x.stop = p } }

// Session is the one decode loop of realizar-host: every entry point (run,
// chat, bench, perplexity, the server) generates through Generate and scores
// through Score.
//
// A Session owns its forward.ArchForward's state between turns and remembers which
// tokens that state holds, so a turn processes only the tokens after the
// longest prefix it shares with them: a chat's next turn only the new
// message, an edited or regenerated turn only what follows the edit
// (Turn.Reused counts the rest). On the CPU forward reuse can change the
// last bits, as llama.cpp's prompt cache does: a batched prefill sums in
// ggml's batch orders and per-token steps in the one-token order, so a
// reused turn's generated tokens (stepped) differ slightly from the same
// positions prefilled anew (the server's prompt-cache tests see the same
// text either way).
//
// Calls are serialized (a mutex); a turn runs on the caller's goroutine and
// the Session starts no goroutines. OnToken and onLogits callbacks must not
// call back into the same Session (they would wait for themselves).
type Session struct {
	mu        sync.Mutex
	fwd       forward.ArchForward
	vocab     Vocab
	sampler   Sampler
	stop      StopPolicy
	processed []int32   // the tokens fwd's state holds; empty when unknown
	scratch   []float32 // the sampler's copy of the logits
	eog       []int32   // the vocabulary's end-of-generation ids, for IgnoreEOG
	eogKnown  bool
}

// NewSession returns a Session generating with fwd and vocab. A nil fwd or
// vocab, or a vocabulary of size <= 0, is an error wrapping ErrBadConfig.
func NewSession(fwd forward.ArchForward, vocab Vocab, opts ...Option) (*Session, error) {
	if fwd == nil || vocab == nil {
		return nil, fmt.Errorf("%w: a Session needs a forward and a vocabulary", ErrBadConfig)
	}
	if n := vocab.Size(); n <= 0 {
		return nil, fmt.Errorf("%w: vocabulary size is %d", ErrBadConfig, n)
	}
	s := &Session{fwd: fwd, vocab: vocab}
	for _, o := range opts {
		o(s)
	}
	return s, nil
}

// Close releases the Session's own policies, the default sampler and stop
// policy (WithSampler, WithStopPolicy), that implement io.Closer: a plugin
// adapter holds a live WebAssembly instance until it is closed. Policies
// passed per turn in GenerateConfig belong to the caller. Close returns the
// errors of the closes joined; the Session must not be used afterwards.
// Closing twice closes the policies once.
func (s *Session) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for _, p := range []any{s.sampler, s.stop} {
		if c, ok := p.(io.Closer); ok {
			errs = append(errs, c.Close())
		}
	}
	s.sampler, s.stop = nil, nil
	return errors.Join(errs...)
}

// Model returns the Session's forward (for its notices and counters).
func (s *Session) Model() forward.ArchForward { return s.fwd }

// Generate runs one turn: it continues prompt (the whole conversation so far,
// not only the new message) until a stop, and returns the Turn. With a
// GenerateConfig.Draft and a forward that is a forward.Verifier, it decodes
// speculatively (NextDraft, Verify, FeedRows), with the same result. It is
// Begin followed by the Run's loop on the Session's own forward:
//
//	for tokens, start, ok := run.Next(); ok; tokens, start, ok = run.Next() {
//		logits, err := fwd.Forward(tokens, start)
//		run.Feed(logits, elapsed, err)
//	}
//
// Refused before anything runs (Turn is zero): a bad cfg (ErrBadConfig), no
// sampler (ErrBadConfig), an empty prompt (ErrEmptyPrompt), a prompt id
// outside the vocabulary (forward.ErrBadToken), len(prompt) >= ContextLength()
// (forward.ErrContextExceeded; a prompt is never truncated).
//
// Failures during the turn return the Turn so far and an error: a forward or
// Reserve error (wrapped; the forward state is forgotten and the next turn
// replays from 0) or a policy failure (*PolicyError naming the policy; the
// Session stays usable). Cancellation and a callback's error are not
// failures: they are stop reasons (StopCancelled, StopCallback).
func (s *Session) Generate(prompt []int32, cfg GenerateConfig) (Turn, error) {
	run, err := s.Begin(prompt, cfg)
	if err != nil {
		return Turn{}, err
	}
	vf, ok := s.fwd.(forward.Verifier)
	if !ok || cfg.Draft == nil {
		for tokens, start, ok := run.Next(); ok; tokens, start, ok = run.Next() {
			t0 := time.Now()
			logits, err := s.fwd.Forward(tokens, start)
			run.Feed(logits, time.Since(t0), err)
		}
		return run.Result()
	}
	for tokens, start, ok := run.NextDraft(); ok; tokens, start, ok = run.NextDraft() {
		t0 := time.Now()
		var logits []float32
		var err error
		if run.Drafts() == 0 {
			logits, err = s.fwd.Forward(tokens, start)
		} else {
			logits, err = vf.Verify(tokens, start)
		}
		run.FeedRows(logits, time.Since(t0), err)
	}
	return run.Result()
}

// newTurn validates a turn's inputs and computes its budget.
func (s *Session) newTurn(prompt []int32, cfg GenerateConfig) (*turnState, error) {
	n := s.vocab.Size()
	if err := cfg.validate(n); err != nil {
		return nil, err
	}
	r := &turnState{s: s, cfg: cfg, sampler: cfg.Sampler, stop: cfg.Stop, pieces: cfg.Pieces}
	if r.pieces == nil {
		r.pieces = s.vocab
	}
	if r.sampler == nil {
		r.sampler = s.sampler
	}
	if r.stop == nil {
		r.stop = s.stop
	}
	if r.sampler == nil {
		return nil, fmt.Errorf("%w: no sampler (GenerateConfig.Sampler or WithSampler)", ErrBadConfig)
	}
	if err := s.checkTokens(prompt); err != nil {
		return nil, err
	}
	ctx := s.fwd.ContextLength()
	if len(prompt) >= ctx {
		return nil, fmt.Errorf("engine: prompt of %d tokens leaves no room in a context of %d: %w",
			len(prompt), ctx, forward.ErrContextExceeded)
	}
	room := ctx - len(prompt)
	r.budget = min(cfg.MaxTokens, room)
	r.capped = room < cfg.MaxTokens
	r.turn.Tokens = slices.Grow(slices.Clone(prompt), r.budget)
	if cfg.Seed != nil {
		r.turn.Seed = *cfg.Seed
	} else {
		r.turn.Seed = rand.Uint64()
	}
	return r, nil
}

// checkTokens refuses an empty list and ids outside the vocabulary.
func (s *Session) checkTokens(tokens []int32) error {
	if len(tokens) == 0 {
		return ErrEmptyPrompt
	}
	n := s.vocab.Size()
	if i := slices.IndexFunc(tokens, func(id int32) bool { return id < 0 || int(id) >= n }); i >= 0 {
		return fmt.Errorf("engine: token %d at index %d is outside the vocabulary [0, %d): %w",
			tokens[i], i, n, forward.ErrBadToken)
	}
	return nil
}

// reserve sizes the forward for positions and forgets the held tokens when
// the forward dropped them (or failed).
func (s *Session) reserve(positions int) error {
	dropped, err := s.fwd.Reserve(positions)
	if err != nil || dropped {
		s.processed = s.processed[:0]
	}
	if err != nil {
		return fmt.Errorf("engine: reserve %d positions: %w", positions, err)
	}
	return nil
}

// reusable is how many leading tokens need not be processed again: the
// longest common prefix of tokens and what the state holds, less one when
// that is all of tokens (a turn forwards at least one token for its logits).
func (s *Session) reusable(tokens []int32) int {
	n := min(len(s.processed), len(tokens)-1)
	for i := range n {
		if tokens[i] != s.processed[i] {
			return i
		}
	}
	return max(n, 0)
}

// Forget drops what the Session knows of its forward's state, so that the
// next turn processes its whole prompt from position 0. A server calls it
// between requests that must not share a KV-cache prefix.
func (s *Session) Forget() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.processed = s.processed[:0]
}

// forwarded records the result of fwd.Forward(tokens, start) and keeps
// s.processed in step with the forward's state: it holds tokens afterwards,
// or nothing known after a failure.
func (s *Session) forwarded(tokens []int32, start int, logits []float32, err error) ([]float32, error) {
	if err == nil && len(logits) != s.vocab.Size() {
		err = fmt.Errorf("%d logits for a vocabulary of %d: %w", len(logits), s.vocab.Size(), forward.ErrBadLogits)
	}
	if err != nil {
		s.processed = s.processed[:0]
		return nil, fmt.Errorf("engine: forward positions %d..%d: %w", start, len(tokens)-1, err)
	}
	s.processed = append(s.processed[:start], tokens[start:]...)
	return logits, nil
}

// forward runs fwd.Forward(tokens, start) (see forwarded).
func (s *Session) forward(tokens []int32, start int) ([]float32, error) {
	logits, err := s.fwd.Forward(tokens, start)
	return s.forwarded(tokens, start, logits, err)
}

// eogIDs returns the vocabulary's end-of-generation ids, found once.
func (s *Session) eogIDs() []int32 {
	if !s.eogKnown {
		for id := range int32(s.vocab.Size()) {
			if s.vocab.IsEOG(id) {
				s.eog = append(s.eog, id)
			}
		}
		s.eogKnown = true
	}
	return s.eog
}

// Score runs tokens through the forward teacher-forced, one position at a
// time, and calls onLogits(i, logits) with the logits after tokens[0..i]
// (the model's distribution for tokens[i+1]) for every i in order. It is the
// basis of perplexity (see LogSoftmaxAt).
//
// It follows Generate's forward rules: Reserve(len(tokens)) first, the state
// is forgotten after a failed forward, and the Session remembers the tokens
// held afterwards (a following Generate that extends them reuses them).
// Scoring starts from position 0 because every position's logits are needed.
//
// Errors: nil onLogits (ErrBadConfig), empty tokens (ErrEmptyPrompt), an id
// outside the vocabulary (forward.ErrBadToken), len(tokens) > ContextLength()
// (forward.ErrContextExceeded), a forward error, or onLogits's error (wrapped), which
// stops the scoring — return ctx.Err() from it to cancel.
//
// # Notes
//
// logits is [n_vocab]float32, valid only during the call.
func (s *Session) Score(tokens []int32, onLogits func(i int, logits []float32) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if onLogits == nil {
		return fmt.Errorf("%w: Score needs an onLogits callback", ErrBadConfig)
	}
	if err := s.checkTokens(tokens); err != nil {
		return err
	}
	if ctx := s.fwd.ContextLength(); len(tokens) > ctx {
		return fmt.Errorf("engine: %d tokens to score in a context of %d: %w", len(tokens), ctx, forward.ErrContextExceeded)
	}
	if err := s.reserve(len(tokens)); err != nil {
		return err
	}
	for i := range tokens {
		logits, err := s.forward(tokens[:i+1], i)
		if err != nil {
			return err
		}
		if err := onLogits(i, logits); err != nil {
			return fmt.Errorf("engine: score position %d: %w", i, err)
		}
	}
	return nil
}

// turnState is the state of one Generate call.
type turnState struct {
	s       *Session
	cfg     GenerateConfig
	sampler Sampler
	stop    StopPolicy
	pieces  Pieces // renders the turn's text
	budget  int    // tokens this turn may generate
	capped  bool   // budget < MaxTokens because the context is short
	turn    Turn
	text    []byte // generated text of this turn (after trims)
	// released is how many bytes of text have been given to OnToken.
	released int

	// The Run's progress: the span Next returns, whether the prompt has been
	// forwarded, and how the turn ended.
	start     int  // Next's start: the tokens before it are held
	prefilled bool // the prompt's forward has been fed
	done      bool // no more forwards: the turn ended or failed
	err       error
	// drafts are the drafts of the span NextDraft returned (empty after
	// Next); they sit in turn.Tokens' spare room after its length.
	drafts []int32
	// decoding is set from the first generated token's choice until the
	// turn ends, decodeStart when it was.
	decoding    bool
	decodeStart time.Time
}

// sample chooses the next token from logits and records its logprobs.
func (r *turnState) sample(logits []float32) (int32, error) {
	s := r.s
	s.scratch = append(s.scratch[:0], logits...)
	if r.cfg.IgnoreEOG {
		for _, id := range s.eogIDs() {
			s.scratch[id] = float32(math.Inf(-1))
		}
	}
	var id int32
	err := r.policy("sampler", r.sampler, func() (err error) {
		id, err = r.sampler.Sample(s.scratch)
		if err == nil && (id < 0 || int(id) >= len(logits)) {
			err = fmt.Errorf("sampled id %d, vocabulary is %d: %w", id, len(logits), forward.ErrBadToken)
		}
		if err == nil {
			r.sampler.Accept(id)
		}
		return err
	})
	if err != nil {
		return 0, err
	}
	if r.cfg.Logprobs || r.cfg.TopLogprobs > 0 {
		step := stepLogprobs(logits, id, r.cfg.TopLogprobs)
		r.turn.Logprobs = append(r.turn.Logprobs, step)
		if r.cfg.OnLogprobs != nil {
			r.cfg.OnLogprobs(step)
		}
	}
	return id, nil
}

// decide applies the stop rules to the chosen token id, streams the text it
// releases, and returns the stop reason (StopNone to go on).
func (r *turnState) decide(id int32) (StopReason, error) {
	var reason StopReason
	var chunk []byte
	switch {
	case r.s.vocab.IsEOG(id):
		reason, chunk = StopEOG, r.releaseAll()
	case slices.Contains(r.cfg.StopTokens, id):
		reason, chunk = StopToken, r.releaseAll()
	default:
		piece := r.pieces.Piece(id)
		r.text = append(r.text, piece...)
		d := Decision{Action: Continue}
		if r.stop != nil {
			err := r.policy("stop policy", r.stop, func() (err error) {
				d, err = r.stop.Check(id, piece)
				return err
			})
			if err != nil {
				return StopNone, err
			}
		}
		switch d.Action {
		case Continue:
			if r.turn.Generated < r.budget {
				end := releaseEnd(r.text, r.released, d.HoldBack)
				chunk, r.released = r.text[r.released:end], end
				break
			}
			reason, chunk = StopMaxTokens, r.releaseAll()
			if r.capped {
				reason = StopContext
			}
		case StopKeep:
			reason, chunk = StopByPolicy, r.releaseAll()
		case StopTrim:
			r.text = r.text[:trimEnd(len(r.text), r.released, d.Trim)]
			reason, chunk = StopByPolicy, r.releaseAll()
		default:
			return StopNone, &PolicyError{Policy: policyName("stop policy", r.stop),
				Err: fmt.Errorf("invalid stop action %d", d.Action)}
		}
	}
	if r.cfg.OnToken != nil {
		if err := r.cfg.OnToken(id, chunk); err != nil {
			r.turn.Cause = err
			return StopCallback, nil
		}
	}
	return reason, nil
}

// releaseAll releases all text not yet released, unfinished UTF-8 included
// (the turn is ending, so it will not be completed).
func (r *turnState) releaseAll() []byte {
	chunk := r.text[r.released:]
	r.released = len(r.text)
	return chunk
}

// policy calls fn, a call into the policy p, timing it and turning its
// error into a *PolicyError naming p, unless the error is one already.
func (r *turnState) policy(role string, p any, fn func() error) error {
	start := time.Now()
	err := fn()
	r.turn.Timings.Policies += time.Since(start)
	var pe *PolicyError
	if err != nil && !errors.As(err, &pe) {
		return &PolicyError{Policy: policyName(role, p), Err: err}
	}
	return err
}

// policyName is "<role> <name>" with the name from Named, else the role
// alone: the error inside names the rest (a plugin's host.PluginError
// names the plugin).
func policyName(role string, p any) string {
	if n, ok := p.(Named); ok {
		return role + " " + n.Name()
	}
	return role
}
