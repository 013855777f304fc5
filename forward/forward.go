package forward

import (
	"errors"
	"fmt"
	"io"
)

// Options configures NewSequenceForward.
type Options struct {
	// Arch is the architecture name reported by Arch ("llama").
	Arch string
	// ModelContext is the model's declared context length in positions
	// (GGUF <arch>.context_length); it must be > 0.
	ModelContext int
	// MaxContext caps the context (the CLI's --ctx-size); 0 means no cap.
	// It must be >= 0.
	MaxContext int
}

// SequenceForward adapts a per-token Sequence to ArchForward.
//
// It remembers how many positions the sequence holds (held). Forward(tokens,
// start) resumes when 0 < start <= held, stepping again from position start
// (positions start..held-1 are overwritten: the Sequence contract lets a Step
// at p follow any run of Steps through p-1); otherwise it resets the sequence and
// replays tokens from position 0. held is set to 0 before each
// step and to position+1 after it succeeds, so a failed Step forces the next
// Forward to replay. A multi-token span goes through Prefill when the sequence
// has it (Prefiller), counted by BatchedPrefills; otherwise token by token.
//
// The optional capabilities Reserver and BackendReporter are used when the
// step has them: without Reserver, Reserve only checks the context length;
// without BackendReporter the backend is "unknown" and OnGPU is false.
//
// A SequenceForward is not safe for concurrent use; a Session serializes its calls.
type SequenceForward struct {
	seq      Sequence
	prefill  Prefiller       // nil when the sequence has no batched pass
	reserver Reserver        // nil when the sequence sizes nothing
	backend  BackendReporter // nil when the sequence does not say
	arch     string
	ctx      int
	held     int
	batched  int
	notices  []string
	rows     []float32 // Verify's logits when the sequence has no Verifier
}

// NewSequenceForward returns a SequenceForward driving seq. Its ContextLength is
// opts.ModelContext, capped by opts.MaxContext when that is > 0. A nil seq
// or an out-of-range option is an error wrapping ErrBadOptions.
func NewSequenceForward(seq Sequence, opts Options) (*SequenceForward, error) {
	switch {
	case seq == nil:
		return nil, fmt.Errorf("%w: SequenceForward needs a sequence", ErrBadOptions)
	case opts.ModelContext <= 0:
		return nil, fmt.Errorf("%w: ModelContext is %d, must be > 0", ErrBadOptions, opts.ModelContext)
	case opts.MaxContext < 0:
		return nil, fmt.Errorf("%w: MaxContext is %d, must be >= 0", ErrBadOptions, opts.MaxContext)
	}
	f := &SequenceForward{seq: seq, arch: opts.Arch, ctx: opts.ModelContext}
	if opts.MaxContext > 0 {
		f.ctx = min(f.ctx, opts.MaxContext)
	}
	f.prefill, _ = seq.(Prefiller)
	f.reserver, _ = seq.(Reserver)
	f.backend, _ = seq.(BackendReporter)
	name := "unknown"
	if f.backend != nil {
		name, _ = f.backend.Backend()
	}
	f.notices = []string{"Backend: " + name}
	return f, nil
}

// Arch returns Options.Arch.
func (f *SequenceForward) Arch() string { return f.arch }

// OnGPU asks the sequence's BackendReporter, at each call (a sequence that fell back
// to the CPU reports false from then on).
func (f *SequenceForward) OnGPU() bool {
	if f.backend == nil {
		return false
	}
	_, gpu := f.backend.Backend()
	return gpu
}

// ContextLength is the model's context capped by Options.MaxContext.
func (f *SequenceForward) ContextLength() int { return f.ctx }

// BatchedPrefills counts the Forward calls whose span went through Prefill.
func (f *SequenceForward) BatchedPrefills() int { return f.batched }

// Notices returns "Backend: <name>" (the backend at construction) followed by
// every line given to AddNotice. The slice is a copy.
func (f *SequenceForward) Notices() []string { return append([]string(nil), f.notices...) }

// AddNotice appends a line to Notices. Whoever switches the sequence's backend
// (a GPU step falling back to the CPU) records it here, e.g.
// "Fallback: cuda → cpu: out of memory".
func (f *SequenceForward) AddNotice(line string) { f.notices = append(f.notices, line) }

// Close releases the sequence's resources when it has any to release (an
// io.Closer: a GPU sequence's device memory) and forgets what it held; a
// step without Close has nothing to release. Use the forward no more after.
func (f *SequenceForward) Close() error {
	f.held = 0
	if c, ok := f.seq.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// Held is the number of positions the sequence holds (0 after a reset, a failed
// step or a dropping Reserve).
func (f *SequenceForward) Held() int { return f.held }

// Reserve sizes the sequence for positions (> ContextLength is an error wrapping
// ErrContextExceeded). When the sequence's Reserver reports that it dropped its
// state, held becomes 0 and dropped is true. A Reserver error also clears
// held, since the state is then unknown.
func (f *SequenceForward) Reserve(positions int) (dropped bool, err error) {
	if positions > f.ctx {
		return false, fmt.Errorf("sequence forward: reserve %d positions, context is %d: %w", positions, f.ctx, ErrContextExceeded)
	}
	if f.reserver == nil {
		return false, nil
	}
	dropped, err = f.reserver.Reserve(positions)
	if err != nil {
		f.held = 0
		return false, fmt.Errorf("sequence forward: step reserve: %w", err)
	}
	if dropped {
		f.held = 0
	}
	return dropped, nil
}

// errEmptySpan is Forward called with nothing to process.
var errEmptySpan = errors.New("sequence forward: nothing to process")

// Forward processes tokens[start:] and returns the logits after the last
// token. It resumes at start only when start == Held() && start > 0, and
// otherwise resets the sequence and processes all of tokens from position 0.
//
// Errors: start outside [0, len(tokens)) (nothing to process); more tokens
// than ContextLength (ErrContextExceeded); a sequence or prefill error (wrapped,
// with its position); an empty logits result (ErrBadLogits). After any error
// Held() is 0.
func (f *SequenceForward) Forward(tokens []int32, start int) ([]float32, error) {
	start, err := f.plan(tokens, start, len(tokens))
	if err != nil {
		return nil, err
	}
	return f.forwardRange(tokens, start, len(tokens))
}

// plan checks a span tokens[start:end] and resolves where it starts: at
// start when 0 < start <= Held(), otherwise at 0 after a reset of the sequence.
// An error clears Held().
func (f *SequenceForward) plan(tokens []int32, start, end int) (int, error) {
	if start < 0 || start >= end || end > len(tokens) {
		f.held = 0
		return 0, fmt.Errorf("%w (positions %d..%d of %d tokens)", errEmptySpan, start, end-1, len(tokens))
	}
	if len(tokens) > f.ctx {
		f.held = 0
		return 0, fmt.Errorf("sequence forward: %d tokens, context is %d: %w", len(tokens), f.ctx, ErrContextExceeded)
	}
	if start > f.held || start == 0 {
		f.seq.Reset()
		f.held = 0
		return 0, nil
	}
	return start, nil
}

var _ Verifier = (*SequenceForward)(nil)

// Verify processes tokens[start:] and returns the logits after every one of
// them, [n*n_vocab]float32 for n = len(tokens)-start (Verifier): in
// one pass of the sequence's Verifier, else Step by Step. It resumes as Forward
// does; a start it does not hold replays tokens[:start] first (Forward's
// way) and then verifies the rows. Held() is len(tokens) afterwards, 0
// after an error. The slice is valid until the next call.
//
// Errors: those of Forward.
func (f *SequenceForward) Verify(tokens []int32, start int) ([]float32, error) {
	from, err := f.plan(tokens, start, len(tokens))
	if err != nil {
		return nil, err
	}
	if from < start {
		if _, err := f.forwardRange(tokens, from, start); err != nil {
			return nil, err
		}
	}
	f.held = 0
	if v, ok := f.seq.(Verifier); ok {
		out, err := v.Verify(tokens, start)
		if err != nil {
			return nil, fmt.Errorf("sequence forward: verify positions %d..%d: %w", start, len(tokens)-1, err)
		}
		if len(out) == 0 || len(out)%(len(tokens)-start) != 0 {
			return nil, fmt.Errorf("sequence forward: %d logits for %d rows: %w", len(out), len(tokens)-start, ErrBadLogits)
		}
		f.held = len(tokens)
		return out, nil
	}
	f.rows = f.rows[:0]
	for pos := start; pos < len(tokens); pos++ {
		logits, err := f.seq.Step(tokens[pos], pos)
		if err != nil {
			f.held = 0
			return nil, fmt.Errorf("sequence forward: step token %d at position %d: %w", tokens[pos], pos, err)
		}
		if len(logits) == 0 {
			f.held = 0
			return nil, fmt.Errorf("sequence forward: empty logits at position %d: %w", pos, ErrBadLogits)
		}
		f.rows = append(f.rows, logits...)
		f.held = pos + 1
	}
	return f.rows, nil
}
