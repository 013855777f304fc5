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
