//go:build wasip1

package guest

import (
	"unsafe"

	"github.com/realizar-host/realizar-host/abi"
)

//go:wasmimport realizar config_get
func configGet(key unsafe.Pointer, keyLen int32, buf unsafe.Pointer, limit int32) int32

//go:wasmimport realizar vocab_piece
func vocabPiece(id int32, buf unsafe.Pointer, limit int32) int32

//go:wasmimport realizar prompt_get
func promptGet(buf unsafe.Pointer, limit int32) int32

//go:wasmimport realizar log
func logMsg(level int32, msg unsafe.Pointer, msgLen int32)

//go:wasmimport realizar clock_ns
func clockNs() int64

// ABI 2 imports. The Go linker emits an import only for a function the
// guest reaches, so a v1 guest never imports them (the host would refuse).

//go:wasmimport realizar token_attrs
func tokenAttrs(first int32, buf unsafe.Pointer, count int32) int32

//go:wasmimport realizar accepted_get
func acceptedGet(buf unsafe.Pointer, limit int32) int32

// ConfigRaw returns the value of the top-level config key (a string
// decoded, anything else as compact JSON) and whether it is present.
func ConfigRaw(key string) ([]byte, bool) {
	k := []byte(key)
	kp := unsafe.Pointer(unsafe.SliceData(k))
	n := configGet(kp, int32(len(k)), nil, 0)
	if n < 0 {
		return nil, false
	}
	buf := make([]byte, n+1) // +1: never a nil data pointer
	configGet(kp, int32(len(k)), unsafe.Pointer(&buf[0]), n)
	return buf[:n], true
}

// VocabPiece copies the bytes of token id into buf and returns their true
// length (which may exceed len(buf)), or -1 for an id out of range.
func VocabPiece(id int32, buf []byte) int {
	return int(vocabPiece(id, unsafe.Pointer(unsafe.SliceData(buf)), int32(len(buf))))
}

// Prompt copies the turn's prompt into buf (grown as needed) and returns
// it. Only meaningful during realizar_reset.
func Prompt(buf []int32) []int32 {
	n := int(promptGet(nil, 0))
	if cap(buf) < n {
		buf = make([]int32, n)
	}
	buf = buf[:n]
	if n > 0 {
		promptGet(unsafe.Pointer(&buf[0]), int32(n))
	}
	return buf
}

// LogMsg appends msg to the instance's log at level (abi.LogDebug..abi.LogError).
func LogMsg(level int32, msg string) {
	logMsg(level, unsafe.Pointer(unsafe.StringData(msg)), int32(len(msg)))
}

// ClockNs is the host's monotonic clock, nanoseconds since the instance was created.
func ClockNs() int64 { return clockNs() }

// TokenAttrs (ABI 2) fills buf with the attributes of ids first,
// first+1, ... and returns how many it wrote (min(len(buf),
// n_vocab-first)), or -1 for first out of range. One call with a buf of
// n_vocab entries covers the vocabulary.
func TokenAttrs(first int32, buf []abi.TokenAttr) int {
	return int(tokenAttrs(first, unsafe.Pointer(unsafe.SliceData(buf)), int32(len(buf))))
}

// Accepted (ABI 2) copies the tokens accepted since the previous step call
// into buf (grown as needed) and returns them, oldest first. Only
// meaningful during realizar_sample or realizar_process; n is the
// n_accepted argument of that call.
func Accepted(buf []int32, n int32) []int32 {
	if cap(buf) < int(n) {
		buf = make([]int32, n)
	}
	buf = buf[:cap(buf)]
	got := int(acceptedGet(unsafe.Pointer(unsafe.SliceData(buf)), int32(len(buf))))
	return buf[:min(got, len(buf))]
}

// Address returns the guest address of p, for realizar_init's answer.
func Address[T any](p *T) uint32 { return uint32(uintptr(unsafe.Pointer(p))) }

// MaskAddress is a mask-mode realizar_process's answer for m: the guest
// address of its first word.
func MaskAddress(m Mask) int32 { return int32(Address(&m[0])) }
