// Package draft holds the draft sources of speculative decoding: each is an
// engine.Drafter serving one sequence, drawing only on that sequence's own
// tokens (its prompt and output) and on what its request brought (a
// predicted output), so no tenant's text reaches another's drafts.
//
//   - Lookup: prompt lookup (llama.cpp's lookup idea): the tokens that
//     followed the last earlier occurrence of the sequence's trailing
//     n-gram.
//   - Prediction: OpenAI's Predicted Outputs: the tokens of a predicted
//     answer, re-aligned after the answer departs from it.
//
// Both adapt their draft length to recent acceptance (Length), so text
// where nothing matches costs a lookup per token and no verify rows.
//
// A Drafter never changes what a turn generates, only how many tokens one
// forward verifies: the Session keeps a draft token only when the turn's
// own sampler chain chose it.
package draft
