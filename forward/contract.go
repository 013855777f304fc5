package forward

// This file is the contract between a forward and its drivers: the decode
// loop (engine), the batcher (serving) and the embedder. model/ and cuda/
// implement it.

// ArchForward is a model forward pass that the Session drives.
//
// Precondition of Forward: the forward's state holds tokens[:start] as its
// first start positions (the KV cache covers positions 0..start-1; it may
// hold more positions, which the call discards and overwrites). start == 0
// means reset and process all of tokens. Forward returns the logits after the last token of tokens,
// a []float32 of length Vocab.Size(); the slice is valid until the next call.
// After a Forward error the state is unknown: the caller's next Forward must
// start from 0 (the Session does so).
//
// An ArchForward is driven by one Session and need not be safe for
// concurrent use.
//
// It holds what the Session calls; SequenceForward, the implementation over a
// Sequence, adds what its owners read (Arch, Notices, BatchedPrefills,
// Held).
type ArchForward interface {
	// OnGPU reports whether logits currently come from a GPU backend.
	OnGPU() bool
	// ContextLength is the number of positions the forward can hold.
	ContextLength() int
	// Reserve sizes the state for positions tokens (the Session calls it once
	// per turn with len(prompt)+budget, before any Forward). dropped reports
	// that the held state was discarded (the caller must then forward from
	// 0). positions > ContextLength() is an error wrapping ErrContextExceeded.
	Reserve(positions int) (dropped bool, err error)
	// Forward processes tokens[start:] given that tokens[:start] are held.
	Forward(tokens []int32, start int) (logits []float32, err error)
}

// Sequence is one sequence's forward state over a model (its KV cache and
// scratch): the per-token forward of a quantized model. SequenceForward
// adapts it to ArchForward; a Batcher runs several in one pass.
//
// Step processes token at position (0-based) and returns the logits after it,
// [n_vocab]float32, valid until the next call. A Step at position p requires
// positions 0..p-1 to have been stepped since the last Reset. Reset forgets
// every position. After a Step error the caller resets before stepping again
// (SequenceForward does).
type Sequence interface {
	Reset()
	Step(token int32, position int) ([]float32, error)
}

// Prefiller is an optional Sequence capability: a batched pass over
// tokens[start:] (positions start..len(tokens)-1) returning the logits after
// the last token. Same precondition as ArchForward.Forward.
type Prefiller interface {
	Prefill(tokens []int32, start int) ([]float32, error)
}

// Verifier is an optional capability of an ArchForward and of a Sequence:
// the verify pass of speculative decoding. Verify has Forward's (and
// Prefill's) precondition and processes tokens[start:] as rows at
// consecutive positions, returning the logits after every row:
// [n*n_vocab]float32 for n = len(tokens)-start, row i bit-identical to what
// Step(tokens[start+i], start+i) returns after the rows before it were
// stepped (equally, what Forward(tokens[:start+i+1], start+i) returns),
// valid until the next call. The state holds all of tokens afterwards; a
// caller that rejects a suffix resumes before it (the positions after what
// it resumes at are discarded and overwritten). After an error the state is
// unknown, as after Forward's.
//
// The Session drafts only on a forward that has it (see engine.Drafter); a
// Sequence without it is verified Step by Step by SequenceForward.
type Verifier interface {
	Verify(tokens []int32, start int) (logits []float32, err error)
}

// Reserver is an optional Sequence capability: size the KV cache for
// positions. dropped reports that the held positions were discarded (the
// cache was reallocated).
type Reserver interface {
	Reserve(positions int) (dropped bool, err error)
}

// BackendReporter is an optional Sequence capability naming its backend
// ("cpu", "cuda") and whether it runs on a GPU now; a step that falls back to
// the CPU reports so from then on.
type BackendReporter interface {
	Backend() (name string, onGPU bool)
}
