package host

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/sys"

	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/engine"
)

// instance is one live guest: its module, the functions the host calls,
// the region it answered at init, and a watchdog for deadlines.
//
// Deadlines cost no allocation per call on our side: the instance's context
// is cancelled by a reusable timer, armed before each call and stopped
// after it. (wazero's WithCloseOnContextDone still starts one goroutine per
// call to watch that context.) A deadline counts the CPU time of the
// call's thread (threadClock; the wall clock where there is none): the
// timer, set for what the call has left, finds on firing how much CPU
// time the call has used and sets itself again for the rest when the
// thread spent part of the wait without a CPU, so a loaded machine slows a
// plugin down without cutting it.
type instance struct {
	p     *Plugin
	mod   api.Module
	mem   api.Memory
	reset api.Function
	step  api.Function // realizar_sample, realizar_process, realizar_check or realizar_draft
	stack []uint64

	st       *instState
	alloc    *capAllocator
	ctx      context.Context
	cancel   context.CancelFunc
	timer    *time.Timer
	timedOut atomic.Bool
	// The armed deadline, under mu (the timer's expire reads it from
	// another goroutine), in clk's time: the CPU time of the thread the
	// call runs on. A growth of the guest's memory stops it and starts it
	// again with what was left (capAllocator): budget is the call's
	// deadline, left what remained of it at armedAt; paused is set while
	// a growth holds it, grew once one has. spent is what the last call
	// used of it, set by disarm: its time, growths not counted; wallAt is
	// when the call was armed, by the wall clock (shortCall).
	mu      sync.Mutex
	clk     threadClock
	armed   bool
	armedAt time.Duration
	budget  time.Duration
	left    time.Duration
	paused  bool
	grew    bool
	spent   time.Duration
	wallAt  time.Time
	// stepLimit is the StepDeadline's D when the call running (or the
	// last one) was armed with what was left of its step rather than
	// its own CallTimeout; 0 otherwise.
	stepLimit time.Duration

	addr     uint32     // input region
	out      abi.Output // a v2 processor's output mode
	topN     int
	inSize   int // bytes
	outSize  int // bytes, processors and drafters only
	nVocab   int
	maxPiece int
}

// instantiate creates an instance of p and runs realizar_init under the
// init deadline. On error nothing is left running.
func (p *Plugin) instantiate(vocab engine.Vocab, maxPiece int, log *logBuffer) (*instance, error) {
	// A fake clock is used as is; the real one counts from instantiation.
	nanotime := p.h.cfg.nanotime
	if nanotime == nil {
		base := time.Now()
		nanotime = func() int64 { return int64(time.Since(base)) }
	}
	log.newInstance()
	st := &instState{vocab: vocab, config: p.values, log: log, nanotime: nanotime, random: abi.NewRNG(abi.RandomGetSalt)}
	i := &instance{
		p: p, st: st, nVocab: vocab.Size(), maxPiece: maxPiece,
		alloc: &capAllocator{capBytes: uint64(p.limits.MemoryPages) * 65536, live: &p.h.memories, hook: p.h.growHook},
		stack: make([]uint64, 5),
	}
	i.alloc.pause, i.alloc.resume = i.pause, i.resume
	base := context.WithValue(context.Background(), stateKey{}, st)
	i.ctx, i.cancel = context.WithCancel(base)
	i.timer = time.AfterFunc(time.Hour, i.expire)
	i.timer.Stop()

	i.arm(p.limits.InitTimeout)
	err := i.start()
	i.disarm()
	if err != nil {
		err = i.classify("init", err)
		i.close()
		return nil, err
	}
	return i, nil
}

func (i *instance) start() error {
	p := i.p
	ctx := experimental.WithMemoryAllocator(i.ctx, i.alloc)
	mod, err := p.h.rt.InstantiateModule(ctx, p.mod.compiled,
		wazero.NewModuleConfig().WithName("").WithStartFunctions(abi.ExportInitialize))
	if err != nil {
		return err
	}
	i.mod = mod
	if mod.IsClosed() {
		return errors.New("the module exited during start")
	}
	i.mem = mod.Memory()
	i.reset = mod.ExportedFunction(abi.ExportReset)
	switch p.kind {
	case abi.KindSampler:
		i.step = mod.ExportedFunction(abi.ExportSample)
	case abi.KindProcessor:
		i.step = mod.ExportedFunction(abi.ExportProcess)
	case abi.KindDrafter:
		i.step = mod.ExportedFunction(abi.ExportDraft)
	default:
		i.step = mod.ExportedFunction(abi.ExportCheck)
	}

	var cfgPtr, cfgLen uint32
	if p.hasAlloc && len(p.config) > 0 {
		cfgLen = uint32(len(p.config))
		i.stack[0] = uint64(cfgLen)
		if err := mod.ExportedFunction(abi.ExportAlloc).CallWithStack(i.ctx, i.stack); err != nil {
			return err
		}
		cfgPtr = uint32(i.stack[0])
		if !i.mem.Write(cfgPtr, p.config) {
			return fmt.Errorf("%w: %s returned %d, %d bytes do not fit memory of %d bytes",
				ErrBadResult, abi.ExportAlloc, cfgPtr, cfgLen, i.mem.Size())
		}
	}
	i.stack[0], i.stack[1], i.stack[2], i.stack[3] = uint64(i.nVocab), uint64(i.maxPiece), uint64(cfgPtr), uint64(cfgLen)
	i.stack[4] = uint64(abi.HostFeatures) // read by a v2 init only
	if err := mod.ExportedFunction(abi.ExportInit).CallWithStack(i.ctx, i.stack); err != nil {
		return err
	}
	addr, topN, code, ok := abi.UnpackInit(int64(i.stack[0]))
	out := abi.OutputEdits
	if p.meta.ABI >= abi.Version2 {
		addr, topN, out, code, ok = abi.UnpackInitV2(int64(i.stack[0]))
	}
	switch {
	case !ok && code == abi.ErrConfig:
		return fmt.Errorf("%w: %s refused its config", ErrBadConfig, p.meta.Name)
	case !ok && code != 0:
		return fmt.Errorf("%w: %s returned %s", ErrPluginFailed, abi.ExportInit, code)
	case !ok:
		return fmt.Errorf("%w: %s returned %#x", ErrBadResult, abi.ExportInit, i.stack[0])
	case topN > 0 && (p.kind == abi.KindStop || p.kind == abi.KindDrafter):
		return fmt.Errorf("%w: a %s asked for top-%d candidates", ErrBadResult, p.kind, topN)
	case out == abi.OutputMask && p.kind != abi.KindProcessor:
		return fmt.Errorf("%w: a %s asked for the mask output mode (processors only)", ErrBadResult, p.kind)
	case out == abi.OutputMask && (addr != 0 || topN != 0):
		return fmt.Errorf("%w: a mask-mode processor answered address %d and top-%d (it has no input region: both 0)", ErrBadResult, addr, topN)
	}
	i.addr, i.topN, i.out = addr, topN, out
	if out == abi.OutputMask {
		return nil // no input or output region
	}
	i.inSize = abi.InputSize(p.kind, i.nVocab, topN, i.maxPiece)
	i.outSize = abi.OutputSize(p.kind, i.nVocab, topN)
	if uint64(addr)+uint64(i.inSize)+uint64(i.outSize) > uint64(i.mem.Size()) {
		return fmt.Errorf("%w: region [%d, +%d) is outside memory of %d bytes",
			ErrBadResult, addr, i.inSize+i.outSize, i.mem.Size())
	}
	return nil
}

// arm starts the deadline of a call: d of the calling thread's CPU time
// from now. It locks the calling goroutine to its thread until disarm, so
// that the call runs where its clock counts.
func (i *instance) arm(d time.Duration) {
	clk := lockThread()
	i.mu.Lock()
	defer i.mu.Unlock()
	i.clk, i.armed, i.paused, i.grew = clk, true, false, false
	i.armedAt, i.budget, i.left, i.wallAt = clk.now(), d, d, time.Now()
	i.timer.Reset(d)
}

// shortCall is the wall time under which a call that did not grow its
// memory is counted (spent) at its wall time, an upper bound of its CPU
// time, without reading its thread's clock: a read is a system call of
// about half a microsecond (more on a VM), and nearly every call is
// shorter. A step of k such calls is counted at most k × shortCall more
// than its CPU time.
const shortCall = time.Millisecond

// disarm stops the deadline after the call, sets spent, and unlocks the
// thread.
func (i *instance) disarm() {
	i.mu.Lock()
	switch wall := time.Since(i.wallAt); {
	case !i.grew && wall < shortCall:
		i.left = i.budget - wall
	case !i.paused:
		i.left -= i.clk.now() - i.armedAt
	}
	i.spent = i.budget - i.left
	i.armed, i.paused = false, false
	i.timer.Stop()
	i.mu.Unlock()
	unlockThread()
}

// expire is the timer's: the call has used its time (the instance is
// cancelled, which ends the call), or, where its thread was without a CPU
// part of the wall time the timer waited, the timer is set again for what
// the call has left. The thread cannot use CPU time faster than the wall
// clock passes, so the deadline is never passed by more than the timer's
// lateness. A disarmed or paused deadline has nothing to do.
func (i *instance) expire() {
	i.mu.Lock()
	defer i.mu.Unlock()
	if !i.armed || i.paused {
		return
	}
	if left := i.left - (i.clk.now() - i.armedAt); left > 0 {
		i.timer.Reset(left)
		return
	}
	i.timedOut.Store(true)
	i.cancel()
}

// pause stops the deadline while the host grows the guest's memory. A
// deadline already spent (or not armed) stays as it is.
func (i *instance) pause() {
	i.mu.Lock()
	defer i.mu.Unlock()
	if !i.armed || i.paused || i.timedOut.Load() {
		return
	}
	i.timer.Stop()
	i.left -= i.clk.now() - i.armedAt
	i.paused, i.grew = true, true
}

// resume starts the deadline paused by pause again with what was left.
func (i *instance) resume() {
	i.mu.Lock()
	defer i.mu.Unlock()
	if !i.paused {
		return
	}
	i.paused = false
	i.armedAt = i.clk.now()
	i.timer.Reset(max(i.left, 0))
}

// call runs fn with the instance's stack under the call deadline.
func (i *instance) call(fn api.Function) error {
	return i.callFor(fn, i.p.limits.CallTimeout, 0)
}

// callFor runs fn with the instance's stack under deadline d, which is
// what was left of a StepDeadline of step when step > 0
// (StepDeadline.limit).
func (i *instance) callFor(fn api.Function, d, step time.Duration) error {
	i.stepLimit = step
	i.arm(d)
	err := fn.CallWithStack(i.ctx, i.stack)
	i.disarm()
	return err
}

// region returns the current view of guest memory [off, off+n) from the
// input address. It is fetched on every step, so a guest that grew its
// memory (moving the backing array) is seen correctly.
func (i *instance) region(off, n int) []byte {
	b, ok := i.mem.Read(i.addr+uint32(off), uint32(n))
	if !ok {
		// Cannot happen: the region was checked at init and memory never shrinks.
		panic("host: plugin region outside memory")
	}
	return b
}

// classify turns a failed call into the *PluginError the caller returns,
// naming the phase ("init", "reset", "step", "check", "draft").
func (i *instance) classify(phase string, err error) error {
	var exit *sys.ExitError
	switch {
	case i.alloc.refused.Load() && i.timedOut.Load():
		// The cap is the cause: a guest refused memory often runs out of
		// time failing (a Go runtime collects and prints its traceback).
		err = fmt.Errorf("%w: asked to grow memory past %d pages, then ran past its deadline",
			ErrPluginMemory, i.p.limits.MemoryPages)
	case i.timedOut.Load() && i.stepLimit > 0 && phase != "init":
		err = fmt.Errorf("%w: the step's deadline of %v (all of its plugin calls together) ran out during this call (memory %s)",
			ErrPluginTimeout, i.stepLimit, i.memoryUse())
	case i.timedOut.Load():
		d := i.p.limits.CallTimeout
		if phase == "init" {
			d = i.p.limits.InitTimeout
		}
		err = fmt.Errorf("%w: no return within %v (memory %s)", ErrPluginTimeout, d, i.memoryUse())
	case i.alloc.refused.Load():
		err = fmt.Errorf("%w: asked to grow memory past %d pages: %w", ErrPluginMemory, i.p.limits.MemoryPages, oneLine{err})
	case isOurs(err):
	case errors.As(err, &exit):
		err = fmt.Errorf("%w: guest exited with code %d", ErrPluginTrap, exit.ExitCode())
	default:
		err = fmt.Errorf("%w: %w", ErrPluginTrap, oneLine{err})
	}
	return i.p.failure(phase, i.st.log, err)
}

// memoryUse says how much of its cap the instance's memory holds, so that a
// guest cut by its deadline while growing toward the cap shows it: "30 of
// 512 pages".
func (i *instance) memoryUse() string {
	return fmt.Sprintf("%d of %d pages", i.alloc.pages(), i.p.limits.MemoryPages)
}

// oneLine is a wazero error as its first line: the "wasm stack trace"
// lines after it name the guest's anonymous functions ($7(i32,i32)), which
// tell a client or a log reader nothing and break one-line messages. The
// error itself stays reachable (errors.As, Unwrap).
type oneLine struct{ err error }

func (e oneLine) Error() string {
	s, _, _ := strings.Cut(e.err.Error(), "\n")
	return s
}

func (e oneLine) Unwrap() error { return e.err }

func isOurs(err error) bool {
	for _, s := range []error{ErrBadConfig, ErrPluginFailed, ErrBadResult, ErrPluginMemory, engine.ErrNoTokenAllowed} {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

// close releases the instance; it is safe to call more than once.
func (i *instance) close() {
	i.timer.Stop()
	if i.mod != nil {
		_ = i.mod.Close(context.Background())
	}
	i.cancel()
}
