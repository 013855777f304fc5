package server

import (
	"sync"

	"github.com/realizar-host/realizar-host/host"
)

// Bounds of the idle samplers kept for structured outputs.
const (
	// IdleSamplersPerTenant is how many samplers with the grammar processor
	// a tenant keeps between requests.
	idleSamplersPerTenant = 2
	// idleSamplersTotal bounds them over all tenants: each holds a grammar
	// instance (its vocabulary's trie and cached masks, tens of MB at a
	// 152k vocabulary, at most plugins.GrammarMemoryPages).
	idleSamplersTotal = 8
)

// idleSamplers keeps the samplers of finished requests whose chain runs the
// grammar processor, so that the next request of the same tenant with the
// same schema or grammar (the same plugins, configs and limits) skips the
// processor's init: reading and sorting the whole vocabulary into its trie,
// seconds at 152k tokens, and it keeps the masks it cached. A sampler is
// reset at the start of each turn (host.Sampler.Reset; a stage whose
// instance failed is re-instantiated there), so reuse changes no output.
//
// Entries are per tenant: no request is served another tenant's
// instances, and no tenant learns from timing which schemas another one
// uses. A request takes its entry out, so no sampler runs two turns at once.
// The oldest entry goes when a bound is reached. Safe for concurrent use.
type idleSamplers struct {
	mu      sync.Mutex
	entries []idleSampler // oldest first
}

type idleSampler struct {
	tenant, key string
	smp         *host.Sampler
}

// take removes and returns tenant's sampler for key, or nil.
func (c *idleSamplers) take(tenant, key string) *host.Sampler {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := len(c.entries) - 1; i >= 0; i-- {
		if e := c.entries[i]; e.tenant == tenant && e.key == key {
			c.entries = append(c.entries[:i], c.entries[i+1:]...)
			return e.smp
		}
	}
	return nil
}

// put keeps smp as tenant's idle sampler for key, closing what the
// bounds push out: tenant's oldest past IdleSamplersPerTenant, then the
// oldest of all past IdleSamplersTotal.
func (c *idleSamplers) put(tenant, key string, smp *host.Sampler) {
	c.mu.Lock()
	c.entries = append(c.entries, idleSampler{tenant, key, smp})
	var out []*host.Sampler
	drop := func(i int) {
		out = append(out, c.entries[i].smp)
		c.entries = append(c.entries[:i], c.entries[i+1:]...)
	}
	n, first := 0, -1
	for i, e := range c.entries {
		if e.tenant == tenant {
			if first < 0 {
				first = i
			}
			n++
		}
	}
	if n > idleSamplersPerTenant {
		drop(first)
	}
	for len(c.entries) > idleSamplersTotal {
		drop(0)
	}
	c.mu.Unlock()
	for _, s := range out {
		_ = s.Close()
	}
}

// len is the number of idle samplers (tests).
func (c *idleSamplers) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}
