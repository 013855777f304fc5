package gguf

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors. A parse failure is a *FormatError wrapping one of the
// first ten; test for them with errors.Is.
var (
	// ErrBadMagic: the file does not start with Magic.
	ErrBadMagic = errors.New("gguf: bad magic")
	// ErrUnsupportedVersion: the version is not 2 or 3 (version 1, or a
	// big-endian file, whose version reads byte-swapped).
	ErrUnsupportedVersion = errors.New("gguf: unsupported version")
	// ErrUnknownType: a metadata value type or tensor type id is not known.
	ErrUnknownType = errors.New("gguf: unknown type")
	// ErrTruncated: the file ends before a value, or a count or length is
	// larger than the bytes left could hold.
	ErrTruncated = errors.New("gguf: truncated")
	// ErrMalformed: a structurally invalid field (empty key, more than four
	// dims, a negative dim, a row length that is not a multiple of the
	// block size, nesting too deep, an element count that overflows).
	ErrMalformed = errors.New("gguf: malformed")
	// ErrBadAlignment: general.alignment is not a power-of-two uint32, or a
	// tensor offset is not a multiple of the alignment.
	ErrBadAlignment = errors.New("gguf: bad alignment")
	// ErrOutOfBounds: a tensor's data lies (partly) outside the file.
	ErrOutOfBounds = errors.New("gguf: tensor data out of bounds")
	// ErrOverlap: two tensors' data overlap.
	ErrOverlap = errors.New("gguf: tensor data overlap")
	// ErrDuplicate: a key or tensor name occurs twice.
	ErrDuplicate = errors.New("gguf: duplicate name")
	// ErrSplit: the shards of a split file are missing or inconsistent.
	ErrSplit = errors.New("gguf: bad split file")

	// ErrKeyNotFound: the metadata has no such key.
	ErrKeyNotFound = errors.New("gguf: key not found")
	// ErrTypeMismatch: a key's value has a type the accessor cannot return
	// without loss.
	ErrTypeMismatch = errors.New("gguf: value type mismatch")
	// ErrTensorNotFound: the file has no tensor of that name.
	ErrTensorNotFound = errors.New("gguf: tensor not found")
	// ErrClosed: the file was closed.
	ErrClosed = errors.New("gguf: file closed")
	// ErrInvalidArgument: a Writer call was given an invalid key, value,
	// tensor description or data, or was called out of order.
	ErrInvalidArgument = errors.New("gguf: invalid argument")
)

// FormatError reports malformed GGUF input.
type FormatError struct {
	// Offset is the byte offset in the file (or shard) of the field at
	// fault.
	Offset int64
	// What says what was expected there ("tensor info name",
	// `tensor "blk.0.attn_q.weight" data within the file`).
	What string
	// Err is one of the sentinel errors above.
	Err error
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("gguf: at offset %d: %s: %s", e.Offset, e.What, strings.TrimPrefix(e.Err.Error(), "gguf: "))
}

func (e *FormatError) Unwrap() error { return e.Err }

// KeyError reports a metadata lookup that failed: the key is absent
// (ErrKeyNotFound) or its value has another type (ErrTypeMismatch).
type KeyError struct {
	Key  string
	Want string // the type the accessor returns ("uint32", "[]string")
	Got  string // the stored type, "" when the key is absent
	Err  error
}

func (e *KeyError) Error() string {
	if e.Got == "" {
		return fmt.Sprintf("gguf: key %q not found", e.Key)
	}
	return fmt.Sprintf("gguf: key %q holds %s, want %s", e.Key, e.Got, e.Want)
}

func (e *KeyError) Unwrap() error { return e.Err }
