// Package server is realizar-host's OpenAI-compatible HTTP server with
// sandboxed, multi-tenant policy loading.
//
// One loaded model (a Model: an forward.ArchForward and its tokenizer) is the
// shared resource. Requests are authenticated per tenant (package tenancy:
// API keys stored as sha256 hashes), limited per tenant (concurrency,
// requests per minute, plugin size, plugin memory and per-step deadline;
// tenancy's refusals are answered as HTTP errors here) and shared
// fairly (its shares of the queue, of the batch's places and of the KV
// budget). A request goes through a pipeline: decode and validate, admit
// (before any costly work), prepare (templates, tokenizing, compiles,
// plugins, in the tenant's share of a preparation pool), run (the serving
// core, package serving: continuous batching, each request its own
// engine.Session over a KV cache of its own) and respond (draining the
// turn's buffered output at the client's pace, each write under a
// deadline).
//
// Every request gets fresh plugin instances: the default sampler is the
// embedded "standard" policy configured from the OpenAI fields; the
// "realizar" extension field selects a tenant's uploaded plugins
// (a tenancy.Store: content-addressed by sha256, one namespace per tenant) or
// built-ins. A plugin that traps, runs past its deadline or exhausts its
// memory fails only its own request.
//
// Endpoints:
//
//	POST /v1/completions, POST /v1/chat/completions   (stream: true is SSE)
//	GET  /v1/models
//	POST /v1/plugins, GET /v1/plugins, DELETE /v1/plugins/{sha256}
//	POST /tokenize, POST /detokenize
//	GET  /health, GET /ready
//
// The Prometheus metrics, labelled by tenant name, are not among them:
// Server.MetricsHandler serves them on a listener of the operator's.
//
// Errors are OpenAI-style JSON: {"error": {"message", "type", "code"}}.
package server
