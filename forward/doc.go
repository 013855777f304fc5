// Package forward is the contract between a model's forward pass and what
// drives it: ArchForward (what the decode loop, engine.Session, calls),
// Sequence (a per-token forward over one sequence's KV cache, with the
// optional Prefiller, Verifier, Reserver, BackendReporter and Batcher
// passes), SequenceForward (the adapter from a Sequence to an ArchForward, which
// remembers how many positions the step holds) and ForwardBatch (spans of
// several sequences in one batched pass, each weight read once for every
// row).
//
// model/ (the CPU forward) and cuda/ (the GPU forward) implement it; engine
// (the decode loop), serving (the batcher) and embedding drive it. forward
// imports nothing of the module, so no forward imports the loop.
//
// Errors are the sentinels ErrBadToken, ErrContextExceeded, ErrBadLogits and
// ErrBadOptions, wrapped with context; test them with errors.Is.
package forward
