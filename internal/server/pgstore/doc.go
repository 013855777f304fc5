// Package pgstore keeps a server's tenants and plugins in PostgreSQL, so
// that several replicas share them: tenants (names, limits, the sha256 of
// each API key, never the keys), and plugin modules content-addressed by
// sha256 in each tenant's namespace, with their metadata; and each
// tenant's stored responses (POST /v1/responses with store), which every
// replica reads from the table (responses.go: retention and expiry).
//
// Open applies the schema migrations embedded in the binary (migrations/,
// numbered from 1) under a PostgreSQL advisory lock, so replicas starting
// together apply each once, and refuses a database whose schema is newer
// than the binary knows (ErrSchemaTooNew).
//
// A Store serves the server from memory: the tenants, and an index of
// every tenant's plugins (sizes and metadata), with module bytes fetched
// on first use and kept in a bounded LRU. Each change made through any
// replica (or by hand, in SQL) notifies channel realizar_changes from a
// trigger; Run listens and reloads what changed, and reloads everything
// every Options.Resync as well, so a change is seen by every replica
// within a second. A listening connection that drops, whatever the error,
// is replaced (backing off from 100 ms to 2 s) and everything reloaded
// once it listens again, so what it missed is seen then. While the database is unreachable the Store keeps serving what
// it holds (tenants, the plugin listing, cached modules) and returns
// errors wrapping tenancy.ErrUnavailable (a 503) for what needs the
// database: an upload, a delete, a module not cached, and every stored
// response (storing one, previous_response_id, GET and DELETE).
package pgstore
