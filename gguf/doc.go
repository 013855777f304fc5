// Package gguf reads and writes GGUF files, the container format of ggml and
// llama.cpp models. It knows only the format: a header, an ordered list of
// typed key-value pairs (metadata), a table of tensor descriptions, and an
// aligned data section holding the tensor bytes. It holds no knowledge of any
// model architecture.
//
// # Layout (all integers little-endian)
//
//	magic      4 bytes, "GGUF" (Magic)
//	version    uint32, 2 or 3 (version 1 and big-endian files are rejected)
//	n_tensors  uint64
//	n_kv       uint64
//	n_kv key-value pairs:   key string, value type uint32, value
//	n_tensors tensor infos: name string, n_dims uint32, n_dims × uint64 dims,
//	                        type uint32, offset uint64
//	padding to the alignment (general.alignment, uint32, default 32)
//	data section: each tensor's bytes at its offset, every offset a multiple
//	              of the alignment
//
// A string is a uint64 byte length followed by that many bytes. An array
// value is an element type uint32, a uint64 count, and the elements; arrays
// may nest.
//
// Dims are in ggml order: Dims[0] (ne[0]) is the row length, the fastest
// varying index. A weight matrix with n_in inputs and n_out outputs has Dims
// [n_in, n_out] and is stored as n_out rows of n_in elements.
//
// # Reading
//
// Open maps a file into memory (syscall.Mmap on Unix systems; elsewhere it
// reads the file whole) and parses it with NewFile; TensorData then returns
// views of the mapping without copying. NewFile parses any io.ReaderAt, in
// which case TensorData reads a copy. Open also loads split files
// ("name-00001-of-00003.gguf"): the tensors of every shard are found through
// the one *File.
//
// Every malformed input yields a *FormatError that carries the byte offset,
// what was expected there, and one of the sentinel errors (ErrBadMagic,
// ErrUnsupportedVersion, ErrUnknownType, ErrTruncated, ErrMalformed,
// ErrBadAlignment, ErrOutOfBounds, ErrOverlap, ErrDuplicate, ErrSplit).
// The parser never panics, and no allocation is sized by a count or length
// that the bytes remaining in the file cannot back.
//
// # Writing
//
// Writer emits GGUF version 3 files that llama.cpp loads: it lays tensors
// out in declaration order at aligned offsets and streams their data, so a
// file far larger than memory can be written one tensor at a time.
package gguf
