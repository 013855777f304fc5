//go:build wasip1

package guest

import "unsafe"

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

// Address returns the guest address of p, for realizar_init's answer.
func Address[T any](p *T) uint32 { return uint32(uintptr(unsafe.Pointer(p))) }
