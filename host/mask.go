package host

import (
	"fmt"
	"math"
	mathbits "math/bits"

	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/engine"
)

// negInfs is a run of -Inf that fills disallowed logits a copy at a time
// (128 mask words' worth).
var negInfs = func() (a [128 * 32]float32) {
	for k := range a {
		a[k] = float32(math.Inf(-1))
	}
	return a
}()

// readMask copies the mask a v2 processor returned at address addr into
// words (abi.MaskWords(n_vocab) of them), checking that it lies in memory.
func (i *instance) readMask(addr uint32, words []uint32) error {
	size := uint32(len(words)) * 4
	memSize := i.mem.Size()
	switch {
	case addr >= memSize:
		return fmt.Errorf("%w: %s returned mask address %d, outside memory of %d bytes",
			ErrBadResult, abi.ExportProcess, addr, memSize)
	case uint64(addr)+uint64(size) > uint64(memSize):
		return fmt.Errorf("%w: the mask at %d is shorter than needed: memory ends after %d of its %d bytes (%d words for %d tokens)",
			ErrBadResult, addr, memSize-addr, size, len(words), i.nVocab)
	}
	b, _ := i.mem.Read(addr, size)
	getU32s(words, b)
	return nil
}

// applyMask sets every logit whose bit in words is clear to -Inf (bits at
// or past len(logits) are ignored) and reports whether an allowed token
// with a logit above -Inf remains (a NaN logit does not count). A run of
// zero words is one copy from negInfs; a mixed word visits only its
// clear bits.
func applyMask(logits []float32, words []uint32) (live bool) {
	n := len(logits)
	words = words[:min(len(words), (n+31)/32)]
	for w := 0; w < len(words); {
		bits := words[w]
		if live && bits == math.MaxUint32 {
			for w++; w < len(words) && words[w] == math.MaxUint32; w++ {
			}
			continue
		}
		if bits == 0 {
			run := 1
			for w+run < len(words) && run < len(negInfs)/32 && words[w+run] == 0 {
				run++
			}
			i0 := 32 * w
			copy(logits[i0:min(i0+32*run, n)], negInfs[:])
			w += run
			continue
		}
		i0 := 32 * w
		seg := logits[i0:min(i0+32, n)]
		valid := uint32(math.MaxUint32)
		if len(seg) < 32 {
			valid = 1<<len(seg) - 1
		}
		for z := ^bits & valid; z != 0; z &= z - 1 {
			seg[mathbits.TrailingZeros32(z)] = float32(math.Inf(-1))
		}
		for a := bits & valid; a != 0 && !live; a &= a - 1 {
			live = seg[mathbits.TrailingZeros32(a)] > float32(math.Inf(-1))
		}
		w++
	}
	return live
}

// andMask folds words into the chain's combined mask.
func andMask(dst, words []uint32) {
	for k, w := range words {
		dst[k] &= w
	}
}

// allowedBy reports whether token's bit is set in words.
func allowedBy(words []uint32, token int32) bool {
	return words[token/32]&(1<<(token%32)) != 0
}

// maskStep reads and applies a mask-mode processor's answer r: an error
// code, 0 (no mask this step) or the mask's address.
func (s *Sampler) maskStep(st *stage, r int32, logits []float32) error {
	i := st.inst
	switch {
	case r < 0:
		return st.failure("step", fmt.Errorf("%w: %s returned %s", ErrPluginFailed, abi.ExportProcess, abi.ErrCode(r)))
	case r == 0:
		return nil
	}
	if err := i.readMask(uint32(r), s.words); err != nil {
		return st.failure("step", err)
	}
	if !s.masked {
		s.masked = true
		copy(s.allowed, s.words)
	} else {
		andMask(s.allowed, s.words)
	}
	if !applyMask(logits, s.words) {
		return st.failure("step", fmt.Errorf(
			"%w: the mask at %d leaves no token with a logit above -Inf", engine.ErrNoTokenAllowed, r))
	}
	return nil
}
