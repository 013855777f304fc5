//go:build !wasip1

package guest

import (
	"sync"

	"github.com/realizar-host/realizar-host/abi"
)

// Fake stands in for the host outside wasip1, so that a plugin's logic can
// be tested natively: the host functions read and write it. Tests set its
// fields before calling the plugin; it is guarded by a mutex.
var Fake = &FakeHost{Config: map[string]string{}}

// FakeHost is the state the native host functions use.
type FakeHost struct {
	mu     sync.Mutex
	Config map[string]string // config_get answers, as the host gives them
	Pieces [][]byte          // vocab_piece answers, by id
	Prompt []int32           // prompt_get's answer
	Clock  int64             // clock_ns's answer
	Logged []string          // LogMsg lines

	Attrs    []abi.TokenAttr // token_attrs' answers, by id (ABI 2)
	Accepted []int32         // accepted_get's answer (ABI 2)
}

// ConfigRaw returns Fake.Config[key].
func ConfigRaw(key string) ([]byte, bool) {
	Fake.mu.Lock()
	defer Fake.mu.Unlock()
	v, ok := Fake.Config[key]
	return []byte(v), ok
}

// VocabPiece copies Fake.Pieces[id].
func VocabPiece(id int32, buf []byte) int {
	Fake.mu.Lock()
	defer Fake.mu.Unlock()
	if id < 0 || int(id) >= len(Fake.Pieces) {
		return -1
	}
	return copy(buf, Fake.Pieces[id]) + max(0, len(Fake.Pieces[id])-len(buf))
}

// Prompt returns a copy of Fake.Prompt in buf.
func Prompt(buf []int32) []int32 {
	Fake.mu.Lock()
	defer Fake.mu.Unlock()
	return append(buf[:0], Fake.Prompt...)
}

// LogMsg appends msg to Fake.Logged.
func LogMsg(level int32, msg string) {
	Fake.mu.Lock()
	defer Fake.mu.Unlock()
	Fake.Logged = append(Fake.Logged, msg)
}

// ClockNs returns Fake.Clock.
func ClockNs() int64 {
	Fake.mu.Lock()
	defer Fake.mu.Unlock()
	return Fake.Clock
}

// TokenAttrs copies Fake.Attrs[first:].
func TokenAttrs(first int32, buf []abi.TokenAttr) int {
	Fake.mu.Lock()
	defer Fake.mu.Unlock()
	if first < 0 || int(first) >= len(Fake.Attrs) {
		return -1
	}
	return copy(buf, Fake.Attrs[first:])
}

// Accepted returns a copy of Fake.Accepted in buf; n is ignored.
func Accepted(buf []int32, n int32) []int32 {
	Fake.mu.Lock()
	defer Fake.mu.Unlock()
	return append(buf[:0], Fake.Accepted...)
}
