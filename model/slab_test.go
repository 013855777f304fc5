package model

import (
	"fmt"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/internal/quant"
)

// addr is the address of b's first byte.
func addr(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

func TestPanelSlab(t *testing.T) {
	for _, size := range []int{1, 63, hugePage - 1, hugePage, 3*hugePage + 5} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			b := panelSlab(size)
			assert.Len(t, b, size)
			assert.Equal(t, size, cap(b), "no room past the end")
			assert.Zero(t, addr(b)%hugePage, "starts on a huge page")
			b[0], b[size-1] = 1, 2 // writable end to end
		})
	}
}

// Every product matrix is read from the model's slab after Load, as panels
// or (a type the panel kernels do not take: Q6_K, Q8_0) as its rows, each
// at a multiple of 64 bytes. That the products give the same bits is
// TestForwardMatchesNaive's and the parity suite's to check.
func TestMatricesInSlab(t *testing.T) {
	for _, typ := range []quant.Type{quant.Q4_K, quant.Q6_K, quant.Q8_0} {
		t.Run(typ.String(), func(t *testing.T) {
			m := open(t, kSpec("llama", typ).write(t), Options{Threads: 2})
			require.NotEmpty(t, m.slab)
			lo, hi := addr(m.slab), addr(m.slab)+uintptr(len(m.slab))
			n := 0
			for _, l := range m.products() {
				if l.data == nil {
					continue
				}
				n++
				b := l.data
				if l.panels != nil {
					b = l.panels
				}
				at := addr(b)
				assert.True(t, at >= lo && at+uintptr(len(b)) <= hi, "%s outside the slab", l.name)
				assert.Zero(t, (at-lo)%64, "%s at a multiple of 64 bytes", l.name)
			}
			assert.Positive(t, n)
		})
	}
}
