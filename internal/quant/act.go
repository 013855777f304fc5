package quant

import (
	"fmt"
	"math"
)

// QuantizeActivation encodes the activation vector x in w.VecDotType() — the
// form a row of weight type w is multiplied with — into dst, as ggml's x86
// CPU backend does (its from_float for that type):
//
//	Q4_K, Q5_K, Q6_K → Q8_K  (as QuantizeQ8_K)
//	Q4_0, Q5_0, Q8_0 → Q8_0  (d = amax/127, q = round-half-even(x*(127/amax));
//	                          unlike QuantizeQ8_0, ggml's file quantizer)
//	Q4_1, Q5_1 → Q8_1        (as Q8_0, plus s = d*float(Σq); unlike
//	                          QuantizeQ8_1)
//	F16 → F16, BF16 → BF16, F32 → F32
//
// dst must hold w.VecDotType().RowSize(len(x)) bytes (ActivationSize). It
// fails with an error wrapping ErrUnknownType, ErrRowLength or ErrShortBuffer.
func QuantizeActivation(w Type, dst []byte, x []float32) error {
	if !w.Known() || w.activationOnly() {
		return fmt.Errorf("quant: activation for %v: %w", w, ErrUnknownType)
	}
	switch vt := w.VecDotType(); vt {
	case Q8_1:
		nb, err := checkRow(Q8_1, len(x), "dst", len(dst))
		if err != nil {
			return err
		}
		quantizeActQ8_1(dst[:36*nb], x[:32*nb])
		return nil
	case Q8_0:
		nb, err := checkRow(Q8_0, len(x), "dst", len(dst))
		if err != nil {
			return err
		}
		quantizeActQ8_0(dst[:34*nb], x[:32*nb])
		return nil
	default:
		return Quantize(vt, dst, x)
	}
}

// ActivationSize returns the bytes QuantizeActivation needs for n values
// multiplied with weights of type w. It fails as Type.RowSize does.
func ActivationSize(w Type, n int) (int, error) {
	if !w.Known() || w.activationOnly() {
		return 0, fmt.Errorf("quant: activation for %v: %w", w, ErrUnknownType)
	}
	return w.VecDotType().RowSize(n)
}

// quantizeActQ8_0 is ggml's x86 quantize_row_q8_0 over whole blocks.
func quantizeActQ8_0(dst []byte, x []float32) {
	for i := range len(x) / 32 {
		xb, b := x[32*i:32*i+32], dst[34*i:34*i+34]
		var amax float32
		for _, v := range xb {
			amax = max(amax, abs32(v))
		}
		putF16(b, amax/127)
		var id float32
		if amax != 0 {
			id = 127 / amax
		}
		for j, v := range xb {
			b[2+j] = byte(int8(math.RoundToEven(float64(float32(v * id)))))
		}
	}
}

// activationOnly reports whether t is an activation encoding that no weight
// tensor uses (Q8_1, Q8_K).
func (t Type) activationOnly() bool { return t == Q8_1 || t == Q8_K }
