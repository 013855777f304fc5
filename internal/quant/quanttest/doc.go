// Package quanttest is the shared conformance suite for quant kernel
// implementations: any quant.Kernels (the CPU fast path, a GPU port) is run
// against quant.Reference() over every weight type and a table of row lengths,
// with guard bytes around every buffer, and must give identical bits while
// leaving its inputs and the guards untouched.
//
// Use it from a test in one line:
//
//	func TestFast(t *testing.T) { quanttest.TestKernels(t, quant.Fast()) }
package quanttest
