package model

import (
	"encoding/binary"

	"github.com/realizar-host/realizar-host/internal/quant"
)

// kvCache holds the keys and values of every layer for positions
// 0..capacity-1 as little-endian IEEE f16, like llama.cpp's default cache.
//
// Keys are stored position-major (layer l, position p: k[l][p*kvDim*2 :
// (p+1)*kvDim*2]) and values transposed (dimension d: v[l][d*capacity*2 :
// (d*capacity+positions)*2]), the layout llama.cpp uses without flash
// attention: both attention products then read contiguous f16 runs.
type kvCache struct {
	layers   int
	kvDim    int // n_head_kv * head_dim
	capacity int // positions held
	k        [][]byte
	v        [][]byte
}

func newKVCache(layers, kvDim int) *kvCache {
	return &kvCache{layers: layers, kvDim: kvDim, k: make([][]byte, layers), v: make([][]byte, layers)}
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
		k := make([]byte, 2*positions*c.kvDim)
		copy(k, c.k[l][:2*keep*c.kvDim])
		v := make([]byte, 2*positions*c.kvDim)
		for d := range c.kvDim {
			copy(v[2*d*positions:], c.v[l][2*d*c.capacity:2*(d*c.capacity+keep)])
		}
		c.k[l], c.v[l] = k, v
	}
	c.capacity = positions
}

// store writes one position's key and value ([kvDim]float32 each) of layer
// l, rounding to f16.
func (c *kvCache) store(l, pos int, key, value []float32) {
	c.storeKey(l, pos, key)
	c.store1Values(l, pos, value)
}

// storeKey writes one position's key ([kvDim]float32) of layer l, rounding
// to f16.
func (c *kvCache) storeKey(l, pos int, key []float32) {
	quant.F32ToF16Slice(c.k[l][2*pos*c.kvDim:][:2*len(key)], key)
}

// storeValues writes dimensions d0..d1-1 of the values of rows
// consecutive positions pos.. of layer l (values: rows × [kvDim]float32,
// row r position pos+r), rounding to f16 as store does: each dimension's
// run of rows f16 is written at once, gathered through tmp (at least rows
// floats), instead of one scattered f16 per position and dimension.
func (c *kvCache) storeValues(l, pos, rows, d0, d1 int, values, tmp []float32) {
	v := c.v[l]
	if rows == 1 {
		for d := d0; d < d1; d++ {
			binary.LittleEndian.PutUint16(v[2*(d*c.capacity+pos):], quant.F32ToF16(values[d]))
		}
		return
	}
	tmp = tmp[:rows]
	for d := d0; d < d1; d++ {
		for r := range tmp {
			tmp[r] = values[r*c.kvDim+d]
		}
		quant.F32ToF16Slice(v[2*(d*c.capacity+pos):][:2*rows], tmp)
	}
}

// store1Values writes one position's value of layer l.
func (c *kvCache) store1Values(l, pos int, value []float32) {
	for d, x := range value {
		binary.LittleEndian.PutUint16(c.v[l][2*(d*c.capacity+pos):], quant.F32ToF16(x))
	}
}

// key returns the f16 key of layer l, position pos, values [off, off+n).
func (c *kvCache) key(l, pos, off, n int) []byte {
	base := 2 * (pos*c.kvDim + off)
	return c.k[l][base : base+2*n]
}

// keys returns layer l's keys from value off of position 0 on (rows of
// kvDim f16, position-major).
func (c *kvCache) keys(l, off int) []byte { return c.k[l][2*off:] }

// valueRows returns layer l's values from dimension off on (rows of
// capacity f16, one a dimension).
func (c *kvCache) valueRows(l, off int) []byte { return c.v[l][2*off*c.capacity:] }

// values returns dimension d of layer l's values for positions 0..n-1
// (n f16).
func (c *kvCache) values(l, d, n int) []byte {
	base := 2 * d * c.capacity
	return c.v[l][base : base+2*n]
}
