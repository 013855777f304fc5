// Package tenancy is realizar-host's tenants and their plugin store: who
// may call the server and within which limits, and where each tenant's
// uploaded plugins are kept. It knows nothing of HTTP; package server
// answers its errors as HTTP errors, and a shared store (package
// server/pgstore) implements Store and TenantSource without importing the
// server.
//
// Tenants authenticates API keys, stored as hex sha256 (HashKey), each
// key naming one Tenant with its Limits: concurrency and requests per
// minute (Tenant.Admit, refused with a *LimitError), shares of the
// server's batch, queue and KV budget, plugin size, memory and per-step
// deadline, and a plugin Quota. A tenants file (TenantsFile) is JSON; a
// TenantSource gives the server the current set at each request.
//
// A Store keeps each tenant's plugin modules, content-addressed by sha256
// (SumOf), one namespace per tenant: DirStore in a directory, MemStore in
// memory. Every Store applies CheckQuota; ErrNoPlugin, ErrQuota and
// ErrUnavailable are its errors.
package tenancy
