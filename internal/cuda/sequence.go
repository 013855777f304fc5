package cuda

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/realizar-host/realizar-host/forward"
	"github.com/realizar-host/realizar-host/model"
)

// Options configures NewSequence. The zero value uses device 0, caches no
// verdict and writes fallback lines to os.Stderr.
type Options struct {
	// Device is the CUDA device ordinal.
	Device int
	// FileSHA256 is the hex sha256 of the GGUF file the model was loaded
	// from (FileSHA256); "" disables verdict caching for this load.
	FileSHA256 string
	// Verdicts caches parity verdicts; nil runs the gate at every load.
	Verdicts *VerdictCache
	// Stderr receives one line per fallback; nil means os.Stderr.
	Stderr io.Writer
	// BatchSize is the most tokens one prefill pass processes on the
	// device; longer spans run in several passes. 0 means 64.
	BatchSize int
	// SyncEachLaunch makes every kernel launch wait for the kernel, so a
	// failing kernel is named in the error (an illegal address, say)
	// instead of surfacing at the end of the token. For diagnosis: it
	// costs a round trip per kernel.
	SyncEachLaunch bool
	// NoGraphs launches every kernel of a decode pass by itself instead of
	// replaying the pass recorded as a CUDA graph (for comparison and
	// diagnosis; SyncEachLaunch implies it).
	NoGraphs bool
}

// gpuBackend is what the gated Step needs of the device forward
// (gpuSequence in a `cuda` build).
type gpuBackend interface {
	forward.Sequence
	forward.Prefiller
	forward.Reserver
	DeviceName() string
	Close() error
}

// Sequence is the GPU forward behind the parity gate, with the CPU forward of
// the same model as its fallback. It implements forward.Sequence,
// forward.Prefiller, forward.Reserver and forward.BackendReporter, so
// forward.NewSequenceForward drives it like the CPU Sequence.
//
// While on the GPU, an error that is not the caller's (a bad token, a
// position gap, the context length) switches it to the CPU for good: the
// GPU is released, a line goes to Options.Stderr and to the OnFallback
// sink, Backend reports onGPU false, and the positions held are replayed on
// the CPU before the call is answered, so no logits ever come from an
// unfinished GPU state.
//
// A Sequence is not safe for concurrent use.
type Sequence struct {
	m       *model.Model
	gpu     gpuBackend // nil once fallen back
	cpu     *model.Sequence
	device  string
	verdict Verdict
	reason  string  // why it fell back; "" while on the GPU
	tokens  []int32 // the tokens held, positions 0..len-1
	stderr  io.Writer
	notify  func(line string)
	pending []string // notices made before OnFallback was set
}

// sequencer is a gpuBackend that opens further sequences over its upload
// (gpuSequence).
type sequencer interface {
	newSequence() (gpuBackend, error)
}

var (
	_ forward.Batcher         = (*Sequence)(nil)
	_ forward.Sequence        = (*Sequence)(nil)
	_ forward.Prefiller       = (*Sequence)(nil)
	_ forward.Reserver        = (*Sequence)(nil)
	_ forward.BackendReporter = (*Sequence)(nil)
)

// newGatedSequence judges gpu against the CPU forward of m (or takes the
// cached verdict for key) and returns a Step on the GPU when it passes and
// on the CPU, loudly, when it does not.
func newGatedSequence(m *model.Model, gpu gpuBackend, opts Options, key verdictKey) *Sequence {
	s := &Sequence{m: m, gpu: gpu, cpu: m.NewSequence(), device: gpu.DeviceName(), stderr: opts.Stderr}
	if s.stderr == nil {
		s.stderr = os.Stderr
	}
	v, cached := Verdict{}, false
	if opts.Verdicts != nil {
		v, cached = opts.Verdicts.get(key)
	}
	if !cached {
		var err error
		v, err = runGate(gpu, s.cpu, probeSequence(m.Config().Vocab, probeTokens))
		if err != nil {
			s.fallBack(err)
			return s
		}
		if opts.Verdicts != nil {
			if err := opts.Verdicts.put(key, v); err != nil {
				fmt.Fprintf(s.stderr, "realizar-host: %v\n", err)
			}
		}
	}
	s.verdict = v
	if !v.OK {
		s.fallBack(fmt.Errorf("%w on %s: %s", ErrParity, s.device, v.Reason))
	}
	return s
}

// OnFallback sets where fallback notices go (typically
// engine.(*SequenceForward).AddNotice) and delivers the ones already made (a
// gate rejection at load). Each line reads "Fallback: cuda → cpu: <why>".
func (s *Sequence) OnFallback(fn func(line string)) {
	s.notify = fn
	if fn != nil {
		for _, l := range s.pending {
			fn(l)
		}
		s.pending = nil
	}
}

// OnGPU reports whether the step still runs on the GPU.
func (s *Sequence) OnGPU() bool { return s.gpu != nil }

// FallbackReason is why the step left the GPU; "" while on it.
func (s *Sequence) fallbackReason() string { return s.reason }

// Verdict is the parity gate's verdict at load (zero when the device failed
// before the gate could judge it).
func (s *Sequence) Verdict() Verdict { return s.verdict }

// Device is the GPU's name as the driver reports it.
func (s *Sequence) Device() string { return s.device }

// Backend is ("cuda", true) on the GPU and the CPU step's name with
// " (cuda fallback)" and false after a fallback.
func (s *Sequence) Backend() (name string, onGPU bool) {
	if s.gpu != nil {
		return "cuda", true
	}
	name, _ = s.cpu.Backend()
	return name + " (cuda fallback)", false
}

// Close releases the device memory; the CPU forward keeps working.
func (s *Sequence) Close() error {
	if s.gpu == nil {
		return nil
	}
	err := s.gpu.Close()
	s.gpu = nil
	s.reason = "closed"
	return err
}

// fallBack leaves the GPU for good, loudly.
func (s *Sequence) fallBack(cause error) {
	if s.gpu != nil {
		_ = s.gpu.Close()
		s.gpu = nil
	}
	s.reason = cause.Error()
	line := "Fallback: cuda → cpu: " + s.reason
	fmt.Fprintln(s.stderr, "realizar-host: "+line)
	if s.notify != nil {
		s.notify(line)
	} else {
		s.pending = append(s.pending, line)
	}
}

// callerError reports whether err is the caller's doing, which the CPU
// forward would refuse too: no reason to leave the GPU.
func callerError(err error) bool {
	return errors.Is(err, forward.ErrBadToken) || errors.Is(err, forward.ErrContextExceeded) || errors.Is(err, model.ErrPosition)
}

// Reset forgets every held position.
func (s *Sequence) Reset() {
	s.tokens = s.tokens[:0]
	if s.gpu != nil {
		s.gpu.Reset()
	}
	s.cpu.Reset()
}

// Step processes token at position and returns the logits after it,
// [Vocab]float32, valid until the next call. Errors as model.Sequence.Step.
func (s *Sequence) Step(token int32, position int) ([]float32, error) {
	if position < 0 || position > len(s.tokens) {
		return nil, fmt.Errorf("%w: position %d with %d held", model.ErrPosition, position, len(s.tokens))
	}
	s.tokens = s.tokens[:position]
	if s.gpu != nil {
		logits, err := s.gpu.Step(token, position)
		if err == nil {
			s.tokens = append(s.tokens, token)
			return logits, nil
		}
		if callerError(err) {
			return nil, err
		}
		s.fallBack(err)
	} else {
		logits, err := s.cpu.Step(token, position)
		if err == nil {
			s.tokens = append(s.tokens, token)
		}
		return logits, err
	}
	// Replay the held span and this token on the CPU.
	return s.replay(append(s.tokens, token))
}

// Prefill processes tokens[start:] in batched passes and returns the logits
// after the last token. Errors as model.Sequence.Prefill.
func (s *Sequence) Prefill(tokens []int32, start int) ([]float32, error) {
	if start < 0 || start >= len(tokens) || start > len(s.tokens) {
		return nil, fmt.Errorf("%w: prefill from %d of %d tokens with %d held", model.ErrPosition, start, len(tokens), len(s.tokens))
	}
	s.tokens = s.tokens[:start]
	if s.gpu != nil {
		logits, err := s.gpu.Prefill(tokens, start)
		if err == nil {
			s.tokens = append(s.tokens, tokens[start:]...)
			return logits, nil
		}
		if callerError(err) {
			return nil, err
		}
		s.fallBack(err)
		return s.replay(tokens)
	}
	logits, err := s.cpu.Prefill(tokens, start)
	if err == nil {
		s.tokens = append(s.tokens, tokens[start:]...)
	}
	return logits, err
}

// replay runs tokens from position 0 on the CPU.
func (s *Sequence) replay(tokens []int32) ([]float32, error) {
	tokens = append([]int32(nil), tokens...)
	s.cpu.Reset()
	s.tokens = s.tokens[:0]
	var logits []float32
	var err error
	if len(tokens) > 1 {
		logits, err = s.cpu.Prefill(tokens, 0)
	} else {
		logits, err = s.cpu.Step(tokens[0], 0)
	}
	if err != nil {
		return nil, fmt.Errorf("cuda: replay of %d positions on cpu: %w", len(tokens), err)
	}
	s.tokens = tokens
	return logits, nil
}

// Reserve sizes the KV cache for positions. On the GPU the cache is
// reallocated when it grows, and dropped reports that the held positions
// were discarded. A device failure (out of memory) falls back to the CPU
// and reports dropped.
func (s *Sequence) Reserve(positions int) (dropped bool, err error) {
	if s.gpu != nil {
		dropped, err = s.gpu.Reserve(positions)
		switch {
		case err == nil:
			if dropped {
				s.tokens = s.tokens[:0]
			}
			return dropped, nil
		case callerError(err):
			return false, err
		}
		s.fallBack(err)
		s.tokens = s.tokens[:0]
		s.cpu.Reset()
		if _, err := s.cpu.Reserve(positions); err != nil {
			return true, err
		}
		return true, nil
	}
	return s.cpu.Reserve(positions)
}

// NewSequence returns another gated step over the same model and GPU
// upload: a KV cache of its own on the device, a CPU step of its own for
// its fallback, the load's verdict. When s is on the CPU, or the device
// cannot hold another sequence, the new step runs on the CPU (the latter
// loudly, as any fallback).
func (s *Sequence) NewSequence() *Sequence {
	n := &Sequence{m: s.m, cpu: s.m.NewSequence(), device: s.device, verdict: s.verdict, stderr: s.stderr}
	if s.gpu == nil {
		n.reason = s.reason
		return n
	}
	sq, ok := s.gpu.(sequencer)
	if !ok {
		n.fallBack(fmt.Errorf("cuda: %T has one sequence", s.gpu))
		return n
	}
	g, err := sq.newSequence()
	if err != nil {
		n.fallBack(fmt.Errorf("cuda: another sequence on %s: %w", s.device, err))
		return n
	}
	n.gpu = g
	return n
}

// Batch runs the rows of several sequences of one model (Steps made by
// NewSequence and NewSequence): the rows of sequences on the GPU go to the
// device forward's Batch, those of sequences on the CPU to one batched
// CPU pass, so each row's logits are its sequence's alone. A row fails
// alone (Err set): a step that is not a *Sequence of s's model or appears twice
// (model.ErrForeignSequence), Step's checks, or, for a row on the GPU, a device
// error, after which that sequence falls back and replays on the CPU as
// Step and Prefill do (the row then gets the CPU's logits).
func (s *Sequence) Batch(rows []forward.Rows) error {
	var gpuRows, cpuRows []forward.Rows
	var gpuIdx, cpuIdx []int
	for i := range rows {
		r := &rows[i]
		r.Out, r.Err = nil, nil
		st, ok := r.Sequence.(*Sequence)
		ours := ok && st != nil && st.m == s.m
		held := -1
		if ours {
			held = len(st.tokens)
		}
		if r.Err = rowErr(rows, i, ours, held); r.Err != nil {
			continue
		}
		st.tokens = st.tokens[:r.Start]
		row := forward.Rows{Start: r.Start, Tokens: r.Tokens, Logits: r.Logits}
		if st.gpu != nil {
			row.Sequence = st.gpu
			gpuRows, gpuIdx = append(gpuRows, row), append(gpuIdx, i)
		} else {
			row.Sequence = st.cpu
			cpuRows, cpuIdx = append(cpuRows, row), append(cpuIdx, i)
		}
	}
	if len(gpuRows) > 0 {
		var passErr error
		if b, ok := gpuRows[0].Sequence.(forward.Batcher); ok {
			passErr = b.Batch(gpuRows)
		} else {
			for j := range gpuRows {
				g := &gpuRows[j]
				g.Out, g.Err = rows[gpuIdx[j]].Sequence.(*Sequence).gpuAlone(g.Start, g.Tokens)
			}
		}
		for j, g := range gpuRows {
			r := &rows[gpuIdx[j]]
			st := r.Sequence.(*Sequence)
			err := g.Err
			if passErr != nil {
				err = passErr
			}
			switch {
			case err == nil:
				st.tokens = append(st.tokens, r.Tokens...)
				r.Out = g.Out
			case callerError(err):
				r.Err = err
			default:
				st.fallBack(err)
				out, rerr := st.replay(append(st.tokens, r.Tokens...))
				r.Err = rerr
				if rerr == nil && r.Logits {
					r.Out = out
				}
			}
		}
	}
	if len(cpuRows) > 0 {
		passErr := cpuRows[0].Sequence.(*model.Sequence).Batch(cpuRows)
		for j, c := range cpuRows {
			r := &rows[cpuIdx[j]]
			st := r.Sequence.(*Sequence)
			switch {
			case passErr != nil:
				r.Err = passErr
			case c.Err != nil:
				r.Err = c.Err
			default:
				st.tokens = append(st.tokens, r.Tokens...)
				r.Out = c.Out
			}
		}
	}
	return nil
}

// gpuAlone runs tokens at start on the device step alone (a device forward
// without Batch); s.tokens holds positions 0..start-1.
func (s *Sequence) gpuAlone(start int, tokens []int32) ([]float32, error) {
	if len(tokens) == 1 {
		return s.gpu.Step(tokens[0], start)
	}
	all := append(s.tokens[:start:start], tokens...)
	return s.gpu.Prefill(all, start)
}

// rowErr is why row i of a Batch cannot run, or nil: its step is not
// one of the pass's (ours false: model.ErrForeignSequence), it has no tokens or
// (held >= 0: the positions the step holds) starts past them
// (model.ErrPosition), or an earlier row that runs has the same step
// (model.ErrForeignSequence).
func rowErr(rows []forward.Rows, i int, ours bool, held int) error {
	r := &rows[i]
	switch {
	case !ours:
		return fmt.Errorf("%w (row %d: %T)", model.ErrForeignSequence, i, r.Sequence)
	case len(r.Tokens) == 0 || r.Start < 0 || (held >= 0 && r.Start > held):
		return fmt.Errorf("%w: row %d: %d tokens at %d with %d held", model.ErrPosition, i, len(r.Tokens), r.Start, held)
	}
	for j := range i {
		if rows[j].Sequence == r.Sequence && rows[j].Err == nil {
			return fmt.Errorf("%w (row %d: the same sequence twice)", model.ErrForeignSequence, i)
		}
	}
	return nil
}
