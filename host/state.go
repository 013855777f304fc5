package host

import (
	"bytes"
	"context"
	"strconv"

	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/engine"
)

// instState is what the host functions of one instance see. It reaches them
// through the call's context (stateKey), which costs no allocation per call.
type instState struct {
	vocab    engine.Vocab
	config   map[string][]byte
	log      *logBuffer
	prompt   []int32         // set only during realizar_reset
	accepted []int32         // set only during a v2 realizar_sample or realizar_process
	attrs    []abi.TokenAttr // token_attrs' answers, computed at its first call
	random   abi.RNG         // fills WASI random_get
	nanotime func() int64
}

type stateKey struct{}

func stateOf(ctx context.Context) *instState {
	return ctx.Value(stateKey{}).(*instState)
}

// tokenAttrs returns the attribute word of every token, computing them once.
func (s *instState) tokenAttrs() []abi.TokenAttr {
	if s.attrs == nil {
		s.attrs = TokenAttrs(s.vocab)
	}
	return s.attrs
}

// TokenTyper is an optional engine.Vocab capability: which tokens are
// control (or unknown) tokens and which are byte-fallback tokens. Without
// it realizar.token_attrs reports neither flag. *tokenizer.Tokenizer has it.
type TokenTyper interface {
	IsControl(id int32) bool
	IsByte(id int32) bool
}

// TokenAttrs is what realizar.token_attrs (ABI 2) reports for each token of
// v: end-of-generation from Vocab.IsEOG, control and byte from TokenTyper
// when v has it, and the piece length.
func TokenAttrs(v engine.Vocab) []abi.TokenAttr {
	out := make([]abi.TokenAttr, v.Size())
	tt, typed := v.(TokenTyper)
	for id := range out {
		var f abi.TokenAttr
		if v.IsEOG(int32(id)) {
			f |= abi.AttrEOG
		}
		if typed && tt.IsControl(int32(id)) {
			f |= abi.AttrControl
		}
		if typed && tt.IsByte(int32(id)) {
			f |= abi.AttrByte
		}
		out[id] = abi.PackTokenAttr(f, len(v.Piece(int32(id))))
	}
	return out
}

// now is the instance's monotonic clock in nanoseconds.
func (s *instState) now() int64 { return s.nanotime() }

// logBuffer keeps the last max bytes written to it, and the first line of
// a Go runtime crash report written since the last newInstance (crash).
type logBuffer struct {
	max int
	b   []byte
	cut bool // older bytes were dropped

	// partial is the start of the line being written, its first maxLastLine
	// bytes; crash the first complete line that began with one of
	// crashPrefixes since newInstance.
	partial []byte
	crash   string
}

// crashPrefixes start the first line of a Go runtime crash report on
// stderr: a panic ("panic: assignment to entry in nil map", "panic:
// runtime error: index out of range [3] with length 2") or a fatal error
// ("fatal error: out of memory"). The lines after it are the traceback,
// whose last frame (runtime/asm_wasm.s) names nothing.
var crashPrefixes = []string{"panic: ", "fatal error: "}

func newLogBuffer(max int) *logBuffer { return &logBuffer{max: max} }

// newInstance forgets the crash line: the log survives re-instantiation,
// a crash belongs to the instance that wrote it.
func (l *logBuffer) newInstance() { l.crash, l.partial = "", l.partial[:0] }

// crashLine is the first line of the Go runtime crash report the current
// instance wrote, or "".
func (l *logBuffer) crashLine() string { return l.crash }

func (l *logBuffer) write(p []byte) {
	l.scan(p)
	l.keep(p)
}

// scan follows p's lines for crashLine.
func (l *logBuffer) scan(p []byte) {
	for len(p) > 0 {
		n := bytes.IndexByte(p, '\n')
		chunk := p
		if n >= 0 {
			chunk = p[:n]
		}
		if room := maxLastLine - len(l.partial); room > 0 {
			l.partial = append(l.partial, chunk[:min(room, len(chunk))]...)
		}
		if n < 0 {
			return
		}
		if l.crash == "" {
			for _, pre := range crashPrefixes {
				if bytes.HasPrefix(l.partial, []byte(pre)) {
					l.crash = string(l.partial)
					break
				}
			}
		}
		l.partial = l.partial[:0]
		p = p[n+1:]
	}
}

func (l *logBuffer) keep(p []byte) {
	if len(p) >= l.max {
		l.cut = l.cut || len(l.b) > 0 || len(p) > l.max
		l.b = append(l.b[:0], p[len(p)-l.max:]...)
		return
	}
	if over := len(l.b) + len(p) - l.max; over > 0 {
		l.b = l.b[:copy(l.b, l.b[over:])]
		l.cut = true
	}
	l.b = append(l.b, p...)
}

var levelNames = [...]string{"debug", "info", "warn", "error"}

func (l *logBuffer) line(level int32, msg []byte) {
	name := "level" + strconv.Itoa(int(level))
	if level >= 0 && int(level) < len(levelNames) {
		name = levelNames[level]
	}
	l.write([]byte("[" + name + "] "))
	l.write(msg)
	l.write([]byte{'\n'})
}

// bytes returns a copy of the log.
func (l *logBuffer) bytes() []byte { return append([]byte(nil), l.b...) }

// maxLastLine bounds lastLine, in bytes.
const maxLastLine = 512

// lastLine returns the last non-empty line, its first maxLastLine bytes.
func (l *logBuffer) lastLine() string {
	b := l.b
	for len(b) > 0 && b[len(b)-1] == '\n' {
		b = b[:len(b)-1]
	}
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == '\n' {
			b = b[i+1:]
			break
		}
	}
	if len(b) > maxLastLine {
		b = b[:maxLastLine] // the start names the cause ("config: unknown key …")
	}
	return string(b)
}
