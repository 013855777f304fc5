// Package engine holds the one decode loop of realizar-host, Session, and the
// contract of what it drives besides the forward: Vocab, Sampler, StopPolicy
// and Drafter. The forward's contract (forward.ArchForward, forward.Sequence
// adapted by forward.SequenceForward, batched passes) is package forward, which
// model/ and cuda/ implement without importing engine.
//
// Data flow: tokens → forward.ArchForward.Forward → logits → Sampler → token →
// StopPolicy → text. engine imports no architecture, no plugin host and no GPU
// code; host/ and tokenizer/ implement what it declares.
//
// # The loop
//
// Session.Generate runs one turn over the whole conversation's tokens:
//
//   - It refuses, whole and before anything runs, MaxTokens <= 0, an empty
//     prompt, and a prompt of ContextLength() tokens or more (never
//     truncated).
//   - The budget is min(MaxTokens, ContextLength()-len(prompt));
//     Turn.ContextCapped reports that the context, not MaxTokens, ended it.
//   - Reserve(len(prompt)+budget) once; a dropped state is forgotten.
//   - The prompt is forwarded from the number of tokens the state holds when
//     it strictly extends them (Turn.Reused), otherwise from 0.
//   - Each step polls the CancelToken first, then samples, applies
//     end-of-generation, GenerateConfig.StopTokens and the StopPolicy,
//     streams the releasable text (after hold-back and unfinished UTF-8) to
//     OnToken, and forwards the token only if generation goes on: the last
//     chosen token is never forwarded.
//   - A failed forward makes the next turn replay from 0; a policy failure
//     ends the turn with a *PolicyError and leaves the Session usable.
//
// # Step by step, and many sequences in one pass
//
// Session.Begin starts the same turn as a Run that a driver advances: Next
// gives the span to forward (the turn's tokens and the position to resume
// at), Feed takes that forward's logits and runs one decode step, Result
// ends it. Generate is exactly that loop over the Session's own forward, so
// both keep the rules above (the cancellation falsifiers included). The
// server's batcher drives one Run per request and forwards their spans
// together: forward.ForwardBatch takes spans of several forward.SequenceForwards
// (each its own KV cache over one model) and, when their steps implement
// forward.Batcher, runs them in one pass in which each weight is read once
// for every row; a span may be cut (forward.Span.Max) so a long prompt goes in
// chunks between other sequences' decode steps. Each span keeps
// forward.SequenceForward's bookkeeping, fails alone, and on the CPU gets the
// bits it would get alone.
//
// Session.Score runs a token list teacher-forced through the same forward
// rules, for perplexity.
//
// Package enginetest holds deterministic reference implementations of the
// contracts (a counting forward.Sequence, Greedy, StringsStop ...) for tests.
package engine
