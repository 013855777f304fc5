// Package grammar constrains generation to a formal language: llama.cpp's
// GBNF grammars (Parse, Compile) and JSON Schema (FromJSONSchema, which
// writes GBNF), matched byte by byte against a vocabulary's token pieces.
//
// A Grammar is compiled once and is immutable. A Vocab is built once per
// vocabulary: every token's bytes in a trie laid out in depth-first order.
// A Matcher pairs the two for one generation: Mask writes the allowed-token
// bitmask for the current position (ceil(n/32) little-endian u32 words, the
// layout of abi.MaskWords), Accept advances past a sampled token.
//
// The matcher runs the grammar as a pushdown automaton over bytes. Its
// state is a set of stacks of grammar positions; stacks are interned as
// linked nodes and states as sorted node sets, so a state is an int32, a
// byte transition is a memoized table lookup and the mask of a state seen
// before is a cached copy. A mask walks the token trie once, skipping the
// subtree of every prefix the grammar refuses. Repetitions compile to tail
// calls that do not grow the stack, so the inside of a string or a number
// returns to the same state after each byte. A counted repetition
// x{0,n} is masked from its unbounded twin while no token can reach its
// end (counter.go), and a walk takes whole trie subtrees that stay inside
// a loop or a character without stepping them. A state's mask depends
// only on its stacks, so the matchers of one Grammar and Vocab share the
// masks they compute (shared.go; bounded by MaxSharedMaskBytes, safe for
// concurrent matchers): a fresh matcher walks the trie only for states no
// matcher of its grammar has masked before.
//
// Bounds: Parse and Compile refuse grammars past MaxGrammarElems compiled
// elements or MaxRepetition repetitions (ErrTooLarge); left recursion is
// an error (ErrLeftRecursion); a stack deeper than MaxStackDepth or a state
// with more than MaxStacks stacks is a dead end for that byte; the
// matcher's memo tables are flushed when they pass their caps. No input
// makes Parse, Compile, Mask or Accept loop without bound.
package grammar
