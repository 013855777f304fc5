package host

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestLogBufferKeepsTheLastBytes(t *testing.T) {
	l := newLogBuffer(16)
	l.line(1, []byte("first"))
	assert.Equal(t, "[info] first\n", string(l.bytes()))
	l.line(3, []byte("second"))
	assert.Len(t, l.bytes(), 16)
	assert.True(t, strings.HasSuffix(string(l.bytes()), "[error] second\n"))
	assert.Equal(t, "[error] second", l.lastLine())
	l.write([]byte(strings.Repeat("x", 40)))
	assert.Equal(t, strings.Repeat("x", 16), string(l.bytes()))
	l.line(9, []byte("odd"))
	assert.True(t, strings.HasSuffix(l.lastLine(), "[level9] odd"), l.lastLine())
}

// The first line of a Go runtime crash report is kept as the crash line,
// however the guest split its writes, and forgotten by the next instance.
func TestLogBufferCrashLine(t *testing.T) {
	tests := []struct {
		name   string
		writes []string
		want   string
	}{
		{"panic", []string{"panic: ", "assignment to entry in nil map", "\n", "\ngoroutine 1 [running]:\nmain.sample(0xffffffff, 0x1)\n",
			"\truntime/asm_wasm.s:428 +0x1\n"}, "panic: assignment to entry in nil map"},
		{"fatal error", []string{"runtime: out of memory: cannot allocate 1048576-byte block (30769152 in use)\n",
			"fatal error: out of memory\n", "goroutine 1 gp=0x1821c0 m=0 mp=0xea680 [running]:\n"}, "fatal error: out of memory"},
		{"the first of two", []string{"panic: first\n\tpanic: second\n"}, "panic: first"},
		{"a line not yet ended", []string{"panic: half"}, ""},
		{"mid-line is not a crash", []string{"x panic: no\n"}, ""},
		{"a plugin's log line", nil, ""},
		{"long", []string{"panic: " + strings.Repeat("y", 600) + "\n"}, "panic: " + strings.Repeat("y", maxLastLine-len("panic: "))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newLogBuffer(64) // smaller than the report: the line is kept apart
			l.line(3, []byte("panic: logged through realizar.log, not a crash"))
			for _, w := range tt.writes {
				l.write([]byte(w))
			}
			assert.Equal(t, tt.want, l.crashLine())
			l.newInstance()
			assert.Empty(t, l.crashLine())
		})
	}
}
