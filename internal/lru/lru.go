// Package lru is a least-recently-used cache bounded by a byte budget:
// each entry is added with its size, and the least recently used entries
// are dropped until the total fits.
package lru

import "container/list"

// Cache maps K to V within a byte budget. It is not safe for concurrent
// use; callers lock.
type Cache[K comparable, V any] struct {
	budget  int64
	bytes   int64
	order   *list.List // front: most recently used; elements hold *entry
	items   map[K]*list.Element
	onEvict func(K, V)
}

type entry[K comparable, V any] struct {
	key  K
	val  V
	size int64
}

// New returns an empty Cache of budget bytes (<= 0: no bound). onEvict,
// when not nil, is called for each entry the budget drops (not for
// Remove), with the caller's lock held.
func New[K comparable, V any](budget int64, onEvict func(K, V)) *Cache[K, V] {
	return &Cache[K, V]{budget: budget, order: list.New(), items: map[K]*list.Element{}, onEvict: onEvict}
}

// Get returns the value of k and marks it most recently used.
func (c *Cache[K, V]) Get(k K) (V, bool) {
	e, ok := c.items[k]
	if !ok {
		var zero V
		return zero, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*entry[K, V]).val, true
}

// Add stores v under k with size bytes, as the most recently used entry
// (replacing an entry of k), then drops the least recently used entries
// until the total is within the budget. An entry larger than the whole
// budget is not kept: it is evicted at once (with the entry of k it
// replaces), and the others stay.
func (c *Cache[K, V]) Add(k K, v V, size int64) {
	if c.budget > 0 && size > c.budget {
		if e, ok := c.items[k]; ok {
			old := e.Value.(*entry[K, V])
			c.drop(e)
			if c.onEvict != nil {
				c.onEvict(old.key, old.val)
			}
		}
		if c.onEvict != nil {
			c.onEvict(k, v)
		}
		return
	}
	if e, ok := c.items[k]; ok {
		old := e.Value.(*entry[K, V])
		c.bytes += size - old.size
		old.val, old.size = v, size
		c.order.MoveToFront(e)
	} else {
		c.items[k] = c.order.PushFront(&entry[K, V]{key: k, val: v, size: size})
		c.bytes += size
	}
	for c.budget > 0 && c.bytes > c.budget && c.order.Len() > 0 {
		last := c.order.Back()
		en := last.Value.(*entry[K, V])
		c.drop(last)
		if c.onEvict != nil {
			c.onEvict(en.key, en.val)
		}
	}
}

// Remove drops k and returns its value, if present.
func (c *Cache[K, V]) Remove(k K) (V, bool) {
	e, ok := c.items[k]
	if !ok {
		var zero V
		return zero, false
	}
	c.drop(e)
	return e.Value.(*entry[K, V]).val, true
}

func (c *Cache[K, V]) drop(e *list.Element) {
	en := e.Value.(*entry[K, V])
	c.order.Remove(e)
	delete(c.items, en.key)
	c.bytes -= en.size
}

// Len is the number of entries.
func (c *Cache[K, V]) Len() int { return len(c.items) }

// Bytes is the total size of the entries, in bytes.
func (c *Cache[K, V]) Bytes() int64 { return c.bytes }

// Keys returns the keys, most recently used first.
func (c *Cache[K, V]) Keys() []K {
	out := make([]K, 0, len(c.items))
	for e := c.order.Front(); e != nil; e = e.Next() {
		out = append(out, e.Value.(*entry[K, V]).key)
	}
	return out
}
