// Package engine holds the one decode loop of realizar-host, Session, and the
// contract it drives: ArchForward (a model forward), Q4kStep (a per-token
// quantized forward, adapted by Q4kForward), Vocab, Sampler and StopPolicy.
//
// Data flow: tokens → ArchForward.Forward → logits → Sampler → token →
// StopPolicy → text. engine imports no architecture, no plugin host and no GPU
// code; model/, cuda/, host/ and tokenizer/ implement what it declares.
package engine
