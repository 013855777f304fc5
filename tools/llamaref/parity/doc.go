// Package parity holds the tests that hold realizar-host's CPU forward
// (package model) to llama.cpp v0.5.0: teacher-forced logits position by
// position, and greedy text, on the real stories260K model and on the
// random-weight fixtures. It has no non-test code.
package parity
