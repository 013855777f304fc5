package host

import (
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
	prompt   []int32 // set only during realizar_reset
	random   abi.RNG // fills WASI random_get
	nanotime func() int64
}

type stateKey struct{}

func stateOf(ctx context.Context) *instState {
	return ctx.Value(stateKey{}).(*instState)
}

// now is the instance's monotonic clock in nanoseconds.
func (s *instState) now() int64 { return s.nanotime() }

// logBuffer keeps the last max bytes written to it.
type logBuffer struct {
	max int
	b   []byte
	cut bool // older bytes were dropped
}

func newLogBuffer(max int) *logBuffer { return &logBuffer{max: max} }

func (l *logBuffer) write(p []byte) {
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

// lastLine returns the last non-empty line, at most 200 bytes.
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
	if len(b) > 200 {
		b = b[len(b)-200:]
	}
	return string(b)
}
