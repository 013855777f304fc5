// Package enginetest holds small, deterministic implementations of the
// engine contract for tests: a counting Sequence, a recording ArchForward, a
// table Vocab, reference samplers (Greedy, Temperature) and reference stop
// policies (StringsStop, MaxTokens).
//
// They are reference implementations, not production code: the shipped
// samplers and stop policies are WebAssembly plugins (host/), which are
// compared against these in differential tests. Nothing here starts a
// goroutine or reads the environment.
package enginetest
