package host

import (
	"fmt"

	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/engine"
)

// StopPolicy is an engine.StopPolicy backed by a stop plugin. Like Sampler
// it owns its instance, is used by one goroutine at a time, and must be
// closed.
type StopPolicy struct {
	vocab    engine.Vocab
	maxPiece int
	st       stage
	closed   bool
	deadline *StepDeadline // nil: each check under its own deadline only
}

var _ engine.StopPolicy = (*StopPolicy)(nil)

// NewStopPolicy adapts a stop plugin for a model whose vocabulary is vocab.
// The StopPolicy holds the plugin's code until Close: p may be closed once
// it is made. A closed p is ErrClosed.
func NewStopPolicy(vocab engine.Vocab, p *Plugin) (*StopPolicy, error) {
	if p == nil || p.kind != abi.KindStop {
		return nil, fmt.Errorf("%w: %v is not a stop policy", ErrKind, p)
	}
	st, err := newStage(p)
	if err != nil {
		return nil, err
	}
	return &StopPolicy{vocab: vocab, maxPiece: maxPieceLen(vocab), st: *st}, nil
}

// Reset starts a turn (instantiating if needed) and calls
// realizar_reset(0, 0): a stop policy has no seed and no prompt.
func (s *StopPolicy) Reset() error {
	if s.closed {
		return ErrClosed
	}
	if err := s.st.ensure(s.vocab, s.maxPiece); err != nil {
		return err
	}
	return s.st.resetTurn(0, nil)
}

// SetStepDeadline puts Check under d, shared with the sequence's Sampler:
// a Check takes what its step's Sample left (nil: under the plugin's
// CallTimeout only).
func (s *StopPolicy) SetStepDeadline(d *StepDeadline) { s.deadline = d }

// Check copies piece (at most max_piece bytes) into the input region and
// calls realizar_check(token, len). Errors are *PluginError.
func (s *StopPolicy) Check(token int32, piece []byte) (engine.Decision, error) {
	if s.closed {
		return engine.Decision{}, ErrClosed
	}
	s.deadline.check()
	i := s.st.inst
	if i == nil {
		return engine.Decision{}, s.st.failure("check", ErrNoInstance)
	}
	if len(piece) > i.inSize {
		piece = piece[:i.inSize]
	}
	copy(i.region(0, len(piece)), piece)
	i.stack[0], i.stack[1] = uint64(uint32(token)), uint64(len(piece))
	d, step, ok := s.deadline.limit(i.p.limits.CallTimeout)
	if !ok {
		return engine.Decision{}, s.st.failure("check", s.deadline.spent())
	}
	err := i.callFor(i.step, d, step)
	s.deadline.add(i.spent)
	if err != nil {
		return engine.Decision{}, s.st.fail("check", err)
	}
	r := int32(i.stack[0])
	action, n, code, ok := abi.UnpackStop(r)
	if !ok {
		err := fmt.Errorf("%w: %s returned %d", ErrBadResult, abi.ExportCheck, r)
		if code != 0 {
			err = fmt.Errorf("%w: %s returned %s", ErrPluginFailed, abi.ExportCheck, code)
		}
		return engine.Decision{}, s.st.failure("check", err)
	}
	switch action {
	case abi.StopKeep:
		return engine.Decision{Action: engine.StopKeep}, nil
	case abi.StopTrim:
		return engine.Decision{Action: engine.StopTrim, Trim: n}, nil
	}
	return engine.Decision{Action: engine.Continue, HoldBack: n}, nil
}

// Log returns a copy of the instance log.
func (s *StopPolicy) Log() []byte { return s.st.log.bytes() }

// Close releases the instance and the plugin's code.
func (s *StopPolicy) Close() error {
	s.closed = true
	s.st.close()
	return nil
}
