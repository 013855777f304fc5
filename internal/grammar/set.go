package grammar

// stampSet is a set of uint64 keys emptied in O(1): a slot holds a key
// only while its stamp is the current generation. Open addressing, linear
// probing, grown at half load.
type stampSet struct {
	keys  []uint64
	stamp []uint32
	gen   uint32
	n     int
}

func (s *stampSet) clear() {
	s.gen++
	s.n = 0
	if s.gen == 0 { // wrapped: stamps from 2^32 generations ago would alias
		clear(s.stamp)
		s.gen = 1
	}
}

// add inserts k and reports whether it was absent.
func (s *stampSet) add(k uint64) bool {
	if 2*(s.n+1) > len(s.keys) {
		s.grow()
	}
	mask := uint64(len(s.keys) - 1)
	for i := mix(k) & mask; ; i = (i + 1) & mask {
		if s.stamp[i] != s.gen {
			s.keys[i], s.stamp[i] = k, s.gen
			s.n++
			return true
		}
		if s.keys[i] == k {
			return false
		}
	}
}

func (s *stampSet) grow() {
	old, oldStamp, gen := s.keys, s.stamp, s.gen
	size := max(64, 2*len(old))
	s.keys, s.stamp, s.n = make([]uint64, size), make([]uint32, size), 0
	if s.gen == 0 {
		s.gen = 1
	}
	for i, k := range old {
		if oldStamp[i] == gen {
			s.add(k)
		}
	}
}

func mix(k uint64) uint64 {
	k ^= k >> 33
	k *= 0xff51afd7ed558ccd
	k ^= k >> 33
	return k
}
