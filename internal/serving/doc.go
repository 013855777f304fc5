// Package serving is realizar-host's serving core: it owns every running
// sequence of one loaded model, from a tenant's admission to the end of its
// turn, for the HTTP server and for `bench --parallel` alike.
//
// A request goes through it in three steps:
//
//  1. Admit reserves an entry in the tenant's share of the queue before
//     any costly work: a tenant whose share is full, or a full queue
//     whose tenant already holds an equal share of it, is refused at once
//     (*Refused, with a Retry-After estimated from what is ahead of it).
//  2. The caller prepares the request (tokenizing, templates, compiles)
//     under that reservation, then Start hands the Core the turn.
//  3. The Core waits for a place of the batch within the tenant's share
//     of places and of the KV budget (round-robin across tenants, FIFO
//     within one), takes a KV slot, and drives the turn through shared
//     batched passes (continuous batching) on a goroutine of its own.
//
// A turn's output (text and logprobs) goes into its Turn's buffer, which
// the caller drains at its own pace: generation never waits for a client.
// Every way a turn ends — done, stop, cancellation by the client or by a
// failed write, the deadline, shutdown, a plugin failure — goes through
// one path that frees its place and its KV reservation and counts its
// metrics once.
package serving
