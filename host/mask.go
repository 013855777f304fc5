package host

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/engine"
)

// negInfs fills a run of disallowed logits with one copy.
var negInfs = func() (a [32]float32) {
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
	for k := range words {
		words[k] = binary.LittleEndian.Uint32(b[4*k:])
	}
	return nil
}

// applyMask sets every logit whose bit in words is clear to -Inf (bits at
// or past len(logits) are ignored) and reports whether an allowed token
// with a logit above -Inf remains (a NaN logit does not count).
func applyMask(logits []float32, words []uint32) (live bool) {
	n := len(logits)
	for w, bits := range words {
		i0 := 32 * w
		if i0 >= n {
			break
		}
		seg := logits[i0:min(i0+32, n)]
		switch bits {
		case 0:
			copy(seg, negInfs[:])
			continue
		case math.MaxUint32:
			if !live {
				for _, l := range seg {
					live = live || l > float32(math.Inf(-1))
				}
			}
			continue
		}
		for k := range seg {
			if bits&(1<<k) == 0 {
				seg[k] = float32(math.Inf(-1))
			} else if seg[k] > float32(math.Inf(-1)) {
				live = true
			}
		}
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
		return &engine.PolicyError{Policy: st.p.label,
			Err: fmt.Errorf("%w: %s returned %s", ErrPluginFailed, abi.ExportProcess, abi.ErrCode(r))}
	case r == 0:
		return nil
	}
	if err := i.readMask(uint32(r), s.words); err != nil {
		return &engine.PolicyError{Policy: st.p.label, Err: err}
	}
	if !s.masked {
		s.masked = true
		copy(s.allowed, s.words)
	} else {
		andMask(s.allowed, s.words)
	}
	if !applyMask(logits, s.words) {
		return &engine.PolicyError{Policy: st.p.label, Err: fmt.Errorf(
			"%w: the mask at %d leaves no token with a logit above -Inf", engine.ErrNoTokenAllowed, r)}
	}
	return nil
}
