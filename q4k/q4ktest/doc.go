// Package q4ktest is the shared conformance suite for q4k kernel
// implementations: any q4k.Kernels (the CPU fast path, a GPU port) is run
// against q4k.Reference() over every weight type and a table of row lengths,
// with guard bytes around every buffer, and must give identical bits while
// leaving its inputs and the guards untouched.
//
// Use it from a test in one line:
//
//	func TestFast(t *testing.T) { q4ktest.TestKernels(t, q4k.Fast()) }
package q4ktest
