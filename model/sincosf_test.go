package model

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSincosfMatchesGlibc checks sincosf bit for bit against values of
// glibc's sinf/cosf (2.36, x86-64, the FMA variant that machines with AVX2
// and FMA run) in testdata/sincosf_glibc.txt: the RoPE angles where Go's
// float32(math.Sin/Cos) rounds differently, then x over all magnitudes and
// signs (both range reductions, tiny and huge arguments).
func TestSincosfMatchesGlibc(t *testing.T) {
	cases, goDiffers := 0, 0
	for _, row := range glibcTable(t, "testdata/sincosf_glibc.txt", 3) {
		x, wantSin, wantCos := row[0], row[1], row[2]
		xf := math.Float32frombits(x)
		s, c := sincosf(xf)
		assert.Equal(t, wantSin, math.Float32bits(s), "sin(%g) (bits %08x)", xf, x)
		assert.Equal(t, wantCos, math.Float32bits(c), "cos(%g) (bits %08x)", xf, x)
		if math.Float32bits(float32(math.Sin(float64(xf)))) != wantSin ||
			math.Float32bits(float32(math.Cos(float64(xf)))) != wantCos {
			goDiffers++
		}
		cases++
	}
	require.Greater(t, cases, 2000)
	// The test can fail: Go's own rounding differs on many of these.
	assert.Greater(t, goDiffers, 500, "the golden file should hold angles where math.Sin/Cos round differently")
}

func TestSincosfSpecial(t *testing.T) {
	for _, x := range []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))} {
		s, c := sincosf(x)
		assert.True(t, s != s && c != c, "sincosf(%g) = %g, %g; want NaN", x, s, c)
	}
	s, c := sincosf(0)
	assert.Equal(t, float32(0), s)
	assert.Equal(t, float32(1), c)
	s, _ = sincosf(float32(math.Copysign(0, -1)))
	assert.True(t, math.Signbit(float64(s)), "sin(-0) keeps the sign")
}
