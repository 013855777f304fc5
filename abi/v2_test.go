package abi_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/realizar-host/realizar-host/abi"
)

func TestInitV2RoundTrip(t *testing.T) {
	for _, tc := range []struct {
		addr uint32
		topN int
		out  abi.Output
	}{{0, 0, abi.OutputMask}, {1024, 40, abi.OutputEdits}, {0xffffffff, abi.MaxTopN, abi.OutputMask}} {
		addr, topN, out, code, ok := abi.UnpackInitV2(abi.PackInitV2(tc.addr, tc.topN, tc.out))
		assert.True(t, ok)
		assert.Equal(t, abi.ErrCode(0), code)
		assert.Equal(t, tc.addr, addr)
		assert.Equal(t, tc.topN, topN)
		assert.Equal(t, tc.out, out)
	}
	// A v1 answer reads as edits mode.
	_, topN, out, _, ok := abi.UnpackInitV2(abi.PackInit(64, 8))
	assert.True(t, ok)
	assert.Equal(t, 8, topN)
	assert.Equal(t, abi.OutputEdits, out)
}

func TestUnpackInitV2Refuses(t *testing.T) {
	for name, tc := range map[string]struct {
		r    int64
		code abi.ErrCode
	}{
		"feature error":   {int64(abi.ErrFeature), abi.ErrFeature},
		"output mode 2":   {2 << 45, 0},
		"output mode 3":   {3 << 45, 0},
		"reserved bit 47": {1 << 47, 0},
		"top-N too large": {int64(abi.MaxTopN+1) << 32, 0},
	} {
		_, _, _, code, ok := abi.UnpackInitV2(tc.r)
		assert.False(t, ok, name)
		assert.Equal(t, tc.code, code, name)
	}
	assert.Equal(t, "feature", abi.ErrFeature.String())
}

func TestMaskWordsAndAttrs(t *testing.T) {
	for n, want := range map[int]int{1: 1, 31: 1, 32: 1, 33: 2, 151936: 4748, 128256: 4008} {
		assert.Equal(t, want, abi.MaskWords(n), n)
	}
	a := abi.PackTokenAttr(abi.AttrEOG|abi.AttrControl, 10)
	assert.Equal(t, 10, a.PieceLen())
	assert.Equal(t, abi.AttrEOG|abi.AttrControl, a&0xff)
	assert.Equal(t, abi.MaxAttrPieceLen, abi.PackTokenAttr(abi.AttrByte, 1<<30).PieceLen())
	assert.Equal(t, "realizar_abi_v2_processor", abi.KindProcessor.MarkerV(abi.Version2))
	assert.Equal(t, abi.KindStop.Marker(), abi.KindStop.MarkerV(abi.Version))
}
