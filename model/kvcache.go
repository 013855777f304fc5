package model

import "github.com/realizar-host/realizar-host/q4k"

// kvCache holds the keys and values of every layer for positions
// 0..capacity-1, as IEEE f16 bits like llama.cpp's default cache.
//
// Keys are stored position-major (k[l][pos*kvDim : (pos+1)*kvDim]) and
// values transposed (v[l][d*capacity : d*capacity+positions]), the layout
// llama.cpp uses without flash attention: both attention products then read
// contiguous f16 runs.
type kvCache struct {
	layers   int
	kvDim    int // n_head_kv * head_dim
	capacity int // positions held
	k        [][]uint16
	v        [][]uint16
}

func newKVCache(layers, kvDim int) *kvCache {
	return &kvCache{layers: layers, kvDim: kvDim, k: make([][]uint16, layers), v: make([][]uint16, layers)}
}

// bytes is the cache's size in bytes at its current capacity.
func (c *kvCache) bytes() int64 { return int64(c.layers) * int64(c.capacity) * int64(c.kvDim) * 2 * 2 }

// grow makes room for positions, keeping the first keep positions of every
// layer. It never shrinks.
func (c *kvCache) grow(positions, keep int) {
	if positions <= c.capacity {
		return
	}
	keep = min(keep, c.capacity)
	for l := range c.layers {
		k := make([]uint16, positions*c.kvDim)
		copy(k, c.k[l][:keep*c.kvDim])
		v := make([]uint16, positions*c.kvDim)
		for d := range c.kvDim {
			copy(v[d*positions:d*positions+keep], c.v[l][d*c.capacity:d*c.capacity+keep])
		}
		c.k[l], c.v[l] = k, v
	}
	c.capacity = positions
}

// store writes one position's key and value ([kvDim]float32 each) of layer l,
// rounding to f16.
func (c *kvCache) store(l, pos int, key, value []float32) {
	f16FromF32(c.k[l][pos*c.kvDim:(pos+1)*c.kvDim], key)
	v := c.v[l]
	for d, x := range value {
		v[d*c.capacity+pos] = q4k.F32ToF16(x)
	}
}

// keys returns the f16 key of position pos, KV head h, in layer l ([headDim]).
func (c *kvCache) key(l, pos, off, headDim int) []uint16 {
	base := pos*c.kvDim + off
	return c.k[l][base : base+headDim]
}

// values returns dimension d of the values of layer l for positions
// 0..n-1 ([n]uint16).
func (c *kvCache) values(l, d, n int) []uint16 {
	return c.v[l][d*c.capacity : d*c.capacity+n]
}
