package host

import (
	"fmt"
	"time"
)

// StepDeadline is one sequence's deadline per decode step, shared by the
// adapters of its policies (SetStepDeadline on its Sampler and its
// StopPolicy): the plugin calls of one step together — the processors',
// the sampler's and the stop policy's, with the host functions they call —
// get at most D of their own time: the CPU time of the thread each call
// runs on, as for Limits.CallTimeout (wall time where the OS has no thread
// CPU clocks), less the host's time growing a guest's memory. A step
// begins with Sampler.Sample; the StopPolicy.Check that follows it belongs
// to the same step, and a Check with no Sample before it begins a step of
// its own. Nothing else counts: not the forward, not other sequences of a
// batch, not the host's copies between the calls (its own work, a few
// microseconds per call), not the time a loaded machine keeps a call
// waiting for a CPU. Each call also keeps its plugin's own
// Limits.CallTimeout.
//
// A step past D is a *PluginError wrapping ErrPluginTimeout that names
// the plugin running (or about to run) when it ran out.
//
// # Notes
//
// It is not safe for concurrent use: the policies of one sequence run one
// at a time.
type StepDeadline struct {
	d       time.Duration
	used    time.Duration // by the step's finished plugin calls
	checked bool          // the step's Check has run: the next Check begins a step
}

// NewStepDeadline returns a StepDeadline of d (> 0) per step.
func NewStepDeadline(d time.Duration) *StepDeadline { return &StepDeadline{d: d} }

// D is the deadline of a step.
func (s *StepDeadline) D() time.Duration { return s.d }

// sample marks the start of Sampler.Sample: a new step.
func (s *StepDeadline) sample() {
	if s != nil {
		s.used, s.checked = 0, false
	}
}

// check marks the start of StopPolicy.Check: the Sample's step, or a new
// one after another Check.
func (s *StepDeadline) check() {
	if s == nil {
		return
	}
	if s.checked {
		s.used = 0
	}
	s.checked = true
}

// add counts d, the time a plugin call of the step used
// (instance.spent), against the step.
func (s *StepDeadline) add(d time.Duration) {
	if s != nil {
		s.used += d
	}
}

// limit is the deadline of the step's next plugin call: callTimeout, or
// what is left of the step when less (step is then D, 0 otherwise). ok is
// false when nothing is left.
func (s *StepDeadline) limit(callTimeout time.Duration) (d, step time.Duration, ok bool) {
	if s == nil {
		return callTimeout, 0, true
	}
	left := s.d - s.used
	switch {
	case left <= 0:
		return 0, s.d, false
	case left < callTimeout:
		return left, s.d, true
	}
	return callTimeout, 0, true
}

// spent is the error of a plugin call not made: the step had nothing left.
func (s *StepDeadline) spent() error {
	return fmt.Errorf("%w: the step's deadline of %v (all of its plugin calls together) ran out before this call", ErrPluginTimeout, s.d)
}
