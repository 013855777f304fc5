package grammar

import (
	"encoding/binary"
	"slices"
	"sync"
	"sync/atomic"
)

// Masks shared by the matchers of one grammar. A state's mask depends
// only on the grammar, the vocabulary and the state's stacks (the
// positions on each stack from its top down), never on a matcher's
// history: its tables, counter abstractions and loop paths only decide
// how fast the mask is found. So a Grammar keeps, per Vocab, the masks
// its matchers have computed, keyed by the stacks written out position
// by position (node and state ids are a matcher's own), and a matcher
// takes a state's mask from there before it walks the trie. A fresh
// matcher per generation then pays a trie walk only for states no
// matcher of its grammar has masked before.
//
// The cache is bounded: it stops taking masks once its masks and keys
// pass MaxSharedMaskBytes (a matcher then computes and keeps the mask
// itself, as without the cache), and states whose key would exceed
// maxSharedKeyBytes are not shared. Stored masks are never modified, so
// concurrent matchers read them without copying; the map is guarded by
// a read-write lock. A compiled grammar belongs to whoever compiled it
// (the server caches one per tenant, schema and vocabulary), so the
// cache never crosses those bounds.

// MaxSharedMaskBytes caps the bytes (masks plus keys) one Grammar keeps
// for the matchers of one Vocab; past it the cache stops growing (a
// mask is 4·ceil(n_vocab/32) bytes, 16 KiB at 128k tokens: ~2,000 masks).
const MaxSharedMaskBytes = 32 << 20

// maxSharedBytes is the cap in force (a variable for tests).
var maxSharedBytes = MaxSharedMaskBytes

// maxSharedKeyBytes: a state with more stack positions than a quarter of
// this is not shared (its key would cost more than its walk saves).
const maxSharedKeyBytes = 64 << 10

// sharedMasks is one Grammar's masks for one Vocab.
type sharedMasks struct {
	v     *Vocab
	mu    sync.RWMutex
	masks map[string][]uint32
	bytes int

	hits, misses, refused atomic.Int64
}

// SharedStats counts a Grammar's shared masks for one Vocab.
type SharedStats struct {
	Masks int // masks kept
	Bytes int // bytes of masks and keys kept (at most MaxSharedMaskBytes)
	// Hits: masks matchers took from the cache; Misses: masks they
	// computed; Refused: of those, masks not kept (the cache was full or
	// the key too long).
	Hits, Misses, Refused int64
}

// grammarShared is a Grammar's caches, one per Vocab (a grammar is
// usually matched against one vocabulary).
type grammarShared struct {
	mu    sync.Mutex
	byVoc []*sharedMasks
}

// shared is g's mask cache for v, created on first use.
func (g *Grammar) shared(v *Vocab) *sharedMasks {
	g.cache.mu.Lock()
	defer g.cache.mu.Unlock()
	for _, c := range g.cache.byVoc {
		if c.v == v {
			return c
		}
	}
	c := &sharedMasks{v: v, masks: map[string][]uint32{}}
	g.cache.byVoc = append(g.cache.byVoc, c)
	return c
}

// SharedStats reports what g's matchers over v share (zero when none has
// masked anything).
func (g *Grammar) SharedStats(v *Vocab) SharedStats {
	c := g.shared(v)
	c.mu.RLock()
	defer c.mu.RUnlock()
	return SharedStats{Masks: len(c.masks), Bytes: c.bytes, Hits: c.hits.Load(), Misses: c.misses.Load(), Refused: c.refused.Load()}
}

func (c *sharedMasks) get(key []byte) []uint32 {
	c.mu.RLock()
	mk := c.masks[string(key)] // the compiler makes no string for the lookup
	c.mu.RUnlock()
	if mk != nil {
		c.hits.Add(1)
	}
	return mk
}

// put keeps mk (which nobody modifies from now on) under key, unless the
// cache is full; it returns the mask the cache holds for key (another
// matcher's equal one when it was first).
func (c *sharedMasks) put(key string, mk []uint32) []uint32 {
	c.misses.Add(1)
	size := 4*len(mk) + len(key) + 64
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.masks[key]; ok {
		return old
	}
	if c.bytes+size > maxSharedBytes {
		c.refused.Add(1)
		return mk
	}
	c.masks[key] = mk
	c.bytes += size
	return mk
}

// sharedKey writes state s's stacks into m.skey (each stack's positions
// from its top down, then ^0; stacks in sorted order, so that every
// matcher writes one state alike) and reports whether it fits
// maxSharedKeyBytes.
func (m *Matcher) sharedKey(s int32) bool {
	seqs, flat := m.sseqs[:0], m.sflat[:0]
	n := 0
	for _, id := range m.states[s] {
		start := len(flat)
		for ; id != 0; id = m.nodes[id].parent {
			flat = append(flat, m.nodes[id].pos)
		}
		if n += len(flat) - start + 1; 4*n > maxSharedKeyBytes {
			m.sflat = flat
			return false
		}
		seqs = append(seqs, flat[start:len(flat):len(flat)])
	}
	// flat may have moved while it grew: slice it again
	off := 0
	for i, seq := range seqs {
		seqs[i] = flat[off : off+len(seq) : off+len(seq)]
		off += len(seq)
	}
	slices.SortFunc(seqs, slices.Compare)
	key := m.skey[:0]
	for _, seq := range seqs {
		for _, p := range seq {
			key = binary.LittleEndian.AppendUint32(key, uint32(p))
		}
		key = binary.LittleEndian.AppendUint32(key, ^uint32(0))
	}
	m.skey, m.sseqs, m.sflat = key, seqs[:0], flat
	return true
}
