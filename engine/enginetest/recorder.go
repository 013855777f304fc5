package enginetest

import "github.com/realizar-host/realizar-host/forward"

// ForwardCall is one recorded ArchForward.Forward: the length of tokens and
// start.
type ForwardCall struct{ Len, Start int }

// Recorder is an ArchForward that passes every call to Fwd and records the
// Forward and Reserve arguments.
type Recorder struct {
	forward.ArchForward
	Forwards []ForwardCall
	Reserves []int
}

// NewRecorder wraps fwd.
func NewRecorder(fwd forward.ArchForward) *Recorder { return &Recorder{ArchForward: fwd} }

// Forward records (len(tokens), start) and forwards the call.
func (r *Recorder) Forward(tokens []int32, start int) ([]float32, error) {
	r.Forwards = append(r.Forwards, ForwardCall{Len: len(tokens), Start: start})
	return r.ArchForward.Forward(tokens, start)
}

// Reserve records positions and forwards the call.
func (r *Recorder) Reserve(positions int) (bool, error) {
	r.Reserves = append(r.Reserves, positions)
	return r.ArchForward.Reserve(positions)
}

// Reset forgets the recorded calls.
func (r *Recorder) Reset() { r.Forwards, r.Reserves = nil, nil }
