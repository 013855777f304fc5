//go:build !wasip1

package guest

import "github.com/realizar-host/realizar-host/abi"

// Outside wasip1 there is no host: these functions let a package that
// calls them build and run natively (vet, the SDK's own tests, a policy's
// pure Go parts such as plugins/sampler/standard), answering as a host
// that gives nothing. A policy's behaviour with a host is tested through
// the real one, package host, as plugins/ does.

// ConfigRaw reports every key absent.
func ConfigRaw(key string) ([]byte, bool) { return nil, false }

// VocabPiece reports every id out of range (-1).
func VocabPiece(id int32, buf []byte) int { return -1 }

// Prompt is the empty prompt: buf[:0].
func Prompt(buf []int32) []int32 { return buf[:0] }

// LogMsg drops msg.
func LogMsg(level int32, msg string) {}

// ClockNs is 0.
func ClockNs() int64 { return 0 }

// TokenAttrs reports first out of range (-1).
func TokenAttrs(first int32, buf []abi.TokenAttr) int { return -1 }

// Accepted is the empty list: buf[:0].
func Accepted(buf []int32, n int32) []int32 { return buf[:0] }
