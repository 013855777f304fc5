package lru

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCache(t *testing.T) {
	var evicted []string
	c := New[string, int](10, func(k string, _ int) { evicted = append(evicted, k) })
	c.Add("a", 1, 4)
	c.Add("b", 2, 4)
	_, ok := c.Get("a") // a is now the most recent
	assert.True(t, ok)
	c.Add("c", 3, 4) // 12 > 10: b goes
	assert.Equal(t, []string{"b"}, evicted)
	assert.Equal(t, []string{"c", "a"}, c.Keys())
	assert.Equal(t, int64(8), c.Bytes())

	c.Add("a", 9, 6) // replaced, 10 bytes: fits
	v, _ := c.Get("a")
	assert.Equal(t, 9, v)
	assert.Equal(t, int64(10), c.Bytes())

	v, ok = c.Remove("c")
	assert.True(t, ok)
	assert.Equal(t, 3, v)
	assert.Equal(t, []string{"b"}, evicted, "Remove is not an eviction")

	c.Add("huge", 0, 11) // over the whole budget: not kept, and the others stay
	assert.Equal(t, []string{"a"}, c.Keys())
	assert.Equal(t, int64(6), c.Bytes())
	assert.Equal(t, []string{"b", "huge"}, evicted)
	c.Add("a", 7, 11) // a replacement over the budget: both go
	assert.Equal(t, 0, c.Len())
	assert.Equal(t, []string{"b", "huge", "a", "a"}, evicted)

	unbounded := New[int, int](0, nil)
	for i := range 100 {
		unbounded.Add(i, i, 1<<20)
	}
	assert.Equal(t, 100, unbounded.Len())
}
