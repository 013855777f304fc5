package host

import (
	"fmt"
	"time"
)

// StepDeadline is one sequence's deadline per decode step, shared by the
// adapters of its policies (SetStepDeadline on its Sampler and its
// StopPolicy): the plugin calls of one step together — the processors',
// the sampler's and the stop policy's, the host functions they call and
// the host's copies between them — get at most D (less the host's time
// growing a guest's memory, which no deadline counts: Limits.CallTimeout).
// A step begins with
// Sampler.Sample; the StopPolicy.Check that follows it belongs to the
// same step, and a Check with no Sample before it begins a step of its
// own. Time the engine spends outside the adapters (the forward, other
// sequences of a batch) does not count. Each call also keeps its
// plugin's own Limits.CallTimeout.
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
	used    time.Duration // by the step's finished adapter calls
	start   time.Time     // of the adapter call running
	checked bool          // the step's Check has run: the next Check begins a step
}

// NewStepDeadline returns a StepDeadline of d (> 0) per step.
func NewStepDeadline(d time.Duration) *StepDeadline { return &StepDeadline{d: d} }

// D is the deadline of a step.
func (s *StepDeadline) D() time.Duration { return s.d }

// sample marks the start of Sampler.Sample: a new step.
func (s *StepDeadline) sample() {
	if s != nil {
		s.used, s.checked, s.start = 0, false, time.Now()
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
	s.checked, s.start = true, time.Now()
}

// end marks the end of the adapter call started by sample or check.
func (s *StepDeadline) end() {
	if s != nil {
		s.used += time.Since(s.start)
	}
}

// exclude takes d, the host's time growing a guest's memory in a plugin
// call of the running adapter call, off the step's time.
func (s *StepDeadline) exclude(d time.Duration) {
	if s != nil {
		s.used -= d
	}
}

// limit is the deadline of a plugin call within the running adapter call:
// callTimeout, or what is left of the step when less (step is then D, 0
// otherwise). ok is false when nothing is left.
func (s *StepDeadline) limit(callTimeout time.Duration) (d, step time.Duration, ok bool) {
	if s == nil {
		return callTimeout, 0, true
	}
	left := s.d - s.used - time.Since(s.start)
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
