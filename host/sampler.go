package host

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/engine"
	"github.com/realizar-host/realizar-host/forward"
)

// Sampler is an engine.Sampler made of a chain of processor plugins and a
// sampler plugin. It owns one instance of each (created by the first Reset,
// re-created by the Reset after one was discarded) and is used by one
// goroutine at a time. Close it when the Session ends.
//
// Per step it copies the logits (or the top-N candidates, selected here) once
// into each plugin's input region and makes one call per plugin. A v1
// plugin is passed the last token accepted (-1 at the first step of a
// turn); a v2 plugin the number of tokens accepted since the previous step,
// which it reads through realizar.accepted_get. A processor's edits are
// applied to the Session's logits in place; so is a v2 processor's
// allowed-token mask (disallowed logits become -Inf), and the sampler's
// choice is then checked against every mask of the step.
type Sampler struct {
	vocab    engine.Vocab
	maxPiece int
	stages   []*stage // processors, then the sampler
	prev     int32
	accepted []int32 // tokens accepted since the last Sample, for v2 plugins
	closed   bool

	// Masks (v2 processors in mask mode): the current one, and the AND of
	// this step's, against which the sampler's choice is checked.
	words   []uint32
	allowed []uint32
	masked  bool

	// Scratch for top-N selection, sized for the largest N in the chain.
	ids  []int32
	vals []float32

	deadline *StepDeadline // nil: each call under its own deadline only
}

// stage is one plugin of a chain and its current instance (nil when none).
type stage struct {
	p    *Plugin
	hold *hold // on p's code, for the adapter's life: p may be closed
	inst *instance
	log  *logBuffer // survives re-instantiation
}

// newStage is a stage of p with its own hold on p's code; ErrClosed when
// p is closed.
func newStage(p *Plugin) (*stage, error) {
	hd, err := p.acquire()
	if err != nil {
		return nil, err
	}
	return &stage{p: p, hold: hd, log: newLogBuffer(p.h.cfg.logBytes)}, nil
}

// close closes the stage's instance, then releases its hold.
func (st *stage) close() {
	if st.inst != nil {
		st.inst.close()
		st.inst = nil
	}
	st.hold.release()
}

var _ engine.Sampler = (*Sampler)(nil)

// NewSampler chains processors (applied in order) before sampler, for a
// model whose vocabulary is vocab. It checks the kinds; instances are
// created by the first Reset. The Sampler holds its plugins' code until
// Close: the Plugins may be closed once it is made. A closed Plugin is
// ErrClosed.
func NewSampler(vocab engine.Vocab, sampler *Plugin, processors ...*Plugin) (*Sampler, error) {
	if sampler == nil || sampler.kind != abi.KindSampler {
		return nil, fmt.Errorf("%w: the last plugin of a chain must be a sampler", ErrKind)
	}
	for _, p := range processors {
		if p == nil || p.kind != abi.KindProcessor {
			return nil, fmt.Errorf("%w: %v is not a processor", ErrKind, p)
		}
	}
	s := &Sampler{vocab: vocab, maxPiece: maxPieceLen(vocab), prev: -1}
	for _, p := range append(processors[:len(processors):len(processors)], sampler) {
		st, err := newStage(p)
		if err != nil {
			_ = s.Close()
			return nil, err
		}
		s.stages = append(s.stages, st)
	}
	return s, nil
}

// MaxPieceLener is an optional engine.Vocab capability: the length in
// bytes of its longest piece. Without it the adapters scan the vocabulary
// (n_vocab calls to Piece) each time one is created.
type MaxPieceLener interface {
	MaxPieceLen() int
}

// maxPieceLen is the longest token piece in bytes (at least 1).
func maxPieceLen(v engine.Vocab) int {
	if m, ok := v.(MaxPieceLener); ok {
		return max(1, m.MaxPieceLen())
	}
	m := 1
	for id := 0; id < v.Size(); id++ {
		m = max(m, len(v.Piece(int32(id))))
	}
	return m
}

// Reset starts a turn: it instantiates any stage without a live instance
// (running realizar_init), then calls realizar_reset(seed, len(prompt)) on
// each, with the prompt readable through realizar.prompt_get. Errors are
// *PluginError.
func (s *Sampler) Reset(seed uint64, prompt []int32) error {
	if s.closed {
		return ErrClosed
	}
	s.prev = -1
	s.accepted = s.accepted[:0]
	for _, st := range s.stages {
		if err := st.ensure(s.vocab, s.maxPiece); err != nil {
			return err
		}
		if st.inst.out == abi.OutputMask && s.words == nil {
			s.words = make([]uint32, abi.MaskWords(s.vocab.Size()))
			s.allowed = make([]uint32, len(s.words))
		}
		if err := st.resetTurn(seed, prompt); err != nil {
			return err
		}
		if n := st.inst.topN; n > len(s.ids) {
			s.ids, s.vals = make([]int32, n), make([]float32, n)
		}
	}
	return nil
}

// ensure instantiates the stage's plugin if it has no live instance.
func (st *stage) ensure(vocab engine.Vocab, maxPiece int) error {
	if st.inst != nil {
		return nil
	}
	inst, err := st.p.instantiate(vocab, maxPiece, st.log)
	if err != nil {
		return err
	}
	st.inst = inst
	return nil
}

// resetTurn calls realizar_reset; the WASI random_get stream restarts from
// the seed.
func (st *stage) resetTurn(seed uint64, prompt []int32) error {
	i := st.inst
	i.st.random = abi.NewRNG(seed ^ abi.RandomGetSalt)
	i.st.prompt = prompt
	i.stack[0], i.stack[1] = seed, uint64(uint32(len(prompt)))
	err := i.call(i.reset)
	i.st.prompt = nil
	if err == nil {
		if code := int32(i.stack[0]); code < 0 {
			err = fmt.Errorf("%w: %s returned %s", ErrPluginFailed, abi.ExportReset, abi.ErrCode(code))
			if abi.ErrCode(code) == abi.ErrConfig {
				err = fmt.Errorf("%w: %s returned %s", ErrBadConfig, abi.ExportReset, abi.ErrCode(code))
			}
			return st.failure("reset", err)
		}
		return nil
	}
	return st.fail("reset", err)
}

// failure is the stage's *PluginError in phase, with its last log line.
func (st *stage) failure(phase string, err error) error { return st.p.failure(phase, st.log, err) }

// fail discards the instance after a trap, timeout or memory error.
func (st *stage) fail(phase string, err error) error {
	err = st.inst.classify(phase, err)
	st.inst.close()
	st.inst = nil
	return err
}

// SetStepDeadline puts the chain's step calls under d, shared with the
// sequence's StopPolicy (nil: each call under its plugin's CallTimeout
// only). Reset's calls are not steps.
func (s *Sampler) SetStepDeadline(d *StepDeadline) { s.deadline = d }

// Sample runs the chain on logits ([n_vocab]float32, modified in place by
// processors) and returns the sampler's token. A token outside
// [0, n_vocab) is a *PluginError wrapping forward.ErrBadToken; a
// trap, timeout or memory error discards the instance and ends the turn.
// It begins a step of the StepDeadline, if one is set.
func (s *Sampler) Sample(logits []float32) (int32, error) {
	if s.closed {
		return 0, ErrClosed
	}
	s.deadline.sample()
	n := s.vocab.Size()
	if len(logits) != n {
		return 0, fmt.Errorf("host: Sample got %d logits for a vocabulary of %d", len(logits), n)
	}
	last := len(s.stages) - 1
	s.masked = false
	for _, st := range s.stages[:last] {
		if err := s.process(st, logits); err != nil {
			return 0, err
		}
	}
	st := s.stages[last]
	r, err := s.call(st, logits)
	if err != nil {
		return 0, err
	}
	if r < 0 || int(r) >= n {
		return 0, st.failure("step", fmt.Errorf("%w: %s returned %d, vocabulary has %d", forward.ErrBadToken, abi.ExportSample, r, n))
	}
	if s.masked && !allowedBy(s.allowed, r) {
		return 0, st.failure("step", fmt.Errorf("%w: %s returned %d, which a processor's mask disallows", forward.ErrBadToken, abi.ExportSample, r))
	}
	s.accepted = s.accepted[:0]
	return r, nil
}

// process runs one processor stage on logits and applies its answer: its
// edits, or (v2 mask mode) its allowed-token mask.
func (s *Sampler) process(st *stage, logits []float32) error {
	r, err := s.call(st, logits)
	if err != nil {
		return err
	}
	if st.inst.out == abi.OutputMask {
		return s.maskStep(st, r, logits)
	}
	return s.applyEdits(st, r, logits)
}

// call copies a stage's input and makes its step call: (prev, count) for
// v1, (n_accepted, count) for v2, with the accepted tokens readable
// through realizar.accepted_get during the call.
func (s *Sampler) call(st *stage, logits []float32) (int32, error) {
	i := st.inst
	if i == nil {
		return 0, st.failure("step", ErrNoInstance)
	}
	count := 0
	if i.out != abi.OutputMask {
		count = s.writeInput(i, logits)
	}
	i.stack[0], i.stack[1] = uint64(uint32(s.prev)), uint64(uint32(count))
	if st.p.meta.ABI >= abi.Version2 {
		i.stack[0] = uint64(uint32(len(s.accepted)))
		i.st.accepted = s.accepted
	}
	d, step, ok := s.deadline.limit(i.p.limits.CallTimeout)
	if !ok {
		i.st.accepted = nil
		return 0, st.failure("step", s.deadline.spent())
	}
	err := i.callFor(i.step, d, step)
	s.deadline.add(i.spent)
	i.st.accepted = nil
	if err != nil {
		return 0, st.fail("step", err)
	}
	return int32(i.stack[0]), nil
}

// writeInput copies logits, or their top-N candidates, into the input
// region and returns the entry count.
func (s *Sampler) writeInput(i *instance, logits []float32) int {
	if i.topN == 0 {
		putF32s(i.region(0, 4*len(logits)), logits)
		return len(logits)
	}
	c := topN(logits, i.topN, s.ids, s.vals)
	dst := i.region(0, 8*i.topN)
	putI32s(dst, s.ids[:c])
	putF32s(dst[4*i.topN:], s.vals[:c])
	return c
}

// applyEdits reads a processor's r edits from its output region and
// applies them to logits.
func (s *Sampler) applyEdits(st *stage, r int32, logits []float32) error {
	i := st.inst
	maxEdits := i.outSize / 8
	switch {
	case r < 0:
		return st.failure("step", fmt.Errorf("%w: %s returned %s", ErrPluginFailed, abi.ExportProcess, abi.ErrCode(r)))
	case int(r) > maxEdits:
		return st.failure("step", fmt.Errorf("%w: %s returned %d edits, at most %d", ErrBadResult, abi.ExportProcess, r, maxEdits))
	}
	if e, id := applyEditBytes(i.region(i.inSize, 8*int(r)), int(r), logits); e >= 0 {
		return st.failure("step", fmt.Errorf("%w: edit %d names id %d, vocabulary has %d", forward.ErrBadToken, e, id, len(logits)))
	}
	return nil
}

// applyEditBytesSlow is applyEditBytes decoding each field.
func applyEditBytesSlow(src []byte, n int, logits []float32) (bad int, id int32) {
	for e := range n {
		id := int32(binary.LittleEndian.Uint32(src[8*e:]))
		if id < 0 || int(id) >= len(logits) {
			return e, id
		}
		logits[id] = math.Float32frombits(binary.LittleEndian.Uint32(src[8*e+4:]))
	}
	return -1, 0
}

// Accept records that token joined the context: v1 plugins see it as prev
// in the next step, v2 plugins among the tokens accepted since their last
// call (every one of them, however many Accepts come between two steps).
func (s *Sampler) Accept(token int32) {
	s.prev = token
	s.accepted = append(s.accepted, token)
}

// Log returns a copy of the log of each stage (processors first), the last
// bytes of what the guest wrote through realizar.log, stdout and stderr.
func (s *Sampler) Log() [][]byte {
	out := make([][]byte, len(s.stages))
	for k, st := range s.stages {
		out[k] = st.log.bytes()
	}
	return out
}

// Close releases the instances and the plugins' code. The Sampler cannot
// be used afterwards.
func (s *Sampler) Close() error {
	s.closed = true
	for _, st := range s.stages {
		st.close()
	}
	return nil
}
