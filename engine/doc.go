// Package engine holds the one decode loop of realizar-host, Session, and the
// contract it drives: ArchForward (a model forward), TokenStep (a per-token
// quantized forward, adapted by StepForward), Vocab, Sampler and StopPolicy.
//
// Data flow: tokens → ArchForward.Forward → logits → Sampler → token →
// StopPolicy → text. engine imports no architecture, no plugin host and no GPU
// code; model/, cuda/, host/ and tokenizer/ implement what it declares.
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
// Session.Score runs a token list teacher-forced through the same forward
// rules, for perplexity.
//
// Package enginetest holds deterministic reference implementations of the
// contract (a counting TokenStep, Greedy, StringsStop ...) for tests.
package engine
