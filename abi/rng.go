package abi

// RNG is the contract's random number generator: xoshiro256** (Blackman and
// Vigna, 2018) whose 256-bit state is filled by four successive outputs of
// SplitMix64 started at the 64-bit seed. The zero value is not seeded; use
// NewRNG.
//
// A sampler creates one RNG per turn from the seed given to realizar_reset
// and draws exactly one Uniform per sampled token (none when the choice is
// greedy, e.g. temperature <= 0).
type RNG struct {
	s [4]uint64
}

// NewRNG seeds an RNG. For SplitMix64 with state x, one output is:
//
//	x += 0x9e3779b97f4a7c15
//	z := x
//	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
//	z = (z ^ z>>27) * 0x94d049bb133111eb
//	return z ^ z>>31
//
// and s[0..3] are its first four outputs starting from x = seed.
func NewRNG(seed uint64) RNG {
	var r RNG
	x := seed
	for i := range r.s {
		x += 0x9e3779b97f4a7c15
		z := x
		z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
		z = (z ^ z>>27) * 0x94d049bb133111eb
		r.s[i] = z ^ z>>31
	}
	return r
}

func rotl(x uint64, k uint) uint64 { return x<<k | x>>(64-k) }

// Next returns the next 64-bit output of xoshiro256**.
func (r *RNG) Next() uint64 {
	s := &r.s
	result := rotl(s[1]*5, 7) * 9
	t := s[1] << 17
	s[2] ^= s[0]
	s[3] ^= s[1]
	s[1] ^= s[2]
	s[0] ^= s[3]
	s[2] ^= t
	s[3] = rotl(s[3], 45)
	return result
}

// Uniform returns a float64 in [0, 1): the top 53 bits of Next times 2^-53
// (exact; no rounding happens).
func (r *RNG) Uniform() float64 {
	return float64(r.Next()>>11) * 0x1p-53
}

// RandomGetSalt is XORed into the turn seed to seed the RNG that fills
// WASI random_get, so that stream differs from a sampler's own draws.
// Before the first reset the seed is 0.
const RandomGetSalt uint64 = 0x72616e646f6d2d31 // "random-1"
