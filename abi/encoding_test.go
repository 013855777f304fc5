package abi_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/realizar-host/realizar-host/abi"
)

func TestInitRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		addr uint32
		topN int
	}{{0, 0}, {1024, 40}, {0xffffffff, abi.MaxTopN}, {65536, 1}} {
		addr, topN, code, ok := abi.UnpackInit(abi.PackInit(tc.addr, tc.topN))
		assert.True(t, ok)
		assert.Equal(t, abi.ErrCode(0), code)
		assert.Equal(t, tc.addr, addr)
		assert.Equal(t, tc.topN, topN)
	}
}

func TestUnpackInitRefuses(t *testing.T) {
	for name, tc := range map[string]struct {
		r    int64
		code abi.ErrCode
	}{
		"config error":   {int64(abi.ErrConfig), abi.ErrConfig},
		"huge negative":  {-1 << 40, abi.ErrFailed},
		"topN over max":  {int64(abi.MaxTopN+1) << 32, 0},
		"reserved bits":  {1 << 50, 0},
		"reserved bit45": {1 << 45, 0},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, code, ok := abi.UnpackInit(tc.r)
			assert.False(t, ok)
			assert.Equal(t, tc.code, code)
		})
	}
}

func TestStopRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		a abi.StopAction
		n int
	}{{abi.StopContinue, 0}, {abi.StopContinue, 7}, {abi.StopKeep, 0}, {abi.StopTrim, 12}, {abi.StopTrim, abi.MaxStopN}} {
		a, n, _, ok := abi.UnpackStop(abi.PackStop(tc.a, tc.n))
		assert.True(t, ok)
		assert.Equal(t, tc.a, a)
		assert.Equal(t, tc.n, n)
	}
	_, _, _, ok := abi.UnpackStop(3)
	assert.False(t, ok, "action 3 is invalid")
	_, _, code, ok := abi.UnpackStop(int32(abi.ErrState))
	assert.False(t, ok)
	assert.Equal(t, abi.ErrState, code)
}

func TestKindNames(t *testing.T) {
	for _, k := range []abi.Kind{abi.KindSampler, abi.KindProcessor, abi.KindStop} {
		got, ok := abi.ParseKind(k.String())
		assert.True(t, ok)
		assert.Equal(t, k, got)
	}
	assert.Equal(t, "realizar_abi_v1_sampler", abi.KindSampler.Marker())
	assert.Equal(t, "realizar_abi_v1_stop", abi.KindStop.Marker())
	_, ok := abi.ParseKind("Sampler")
	assert.False(t, ok)
}

func TestRegionSizes(t *testing.T) {
	assert.Equal(t, 151936*4, abi.InputSize(abi.KindSampler, 151936, 0, 0))
	assert.Equal(t, 40*8, abi.InputSize(abi.KindSampler, 151936, 40, 0))
	assert.Equal(t, 32000*8, abi.OutputSize(abi.KindProcessor, 32000, 0))
	assert.Equal(t, 0, abi.OutputSize(abi.KindSampler, 32000, 0))
	assert.Equal(t, 77, abi.InputSize(abi.KindStop, 32000, 0, 77))
}

func TestDrawEdges(t *testing.T) {
	probs := []float64{0.5, 0.25, 0, 0.25}
	assert.Equal(t, 0, abi.Draw(probs, 1, 0))
	assert.Equal(t, 1, abi.Draw(probs, 1, 0.5))
	assert.Equal(t, 3, abi.Draw(probs, 1, 0.75))
	assert.Equal(t, 3, abi.Draw(probs, 1, 1), "target reaching the sum falls back to the last non-zero")
	assert.Equal(t, 0, abi.Draw([]float64{0, 0}, 0, 0.3))
}
