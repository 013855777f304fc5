package abi

// Layout of realizar_init's i64 result (non-negative):
//
//	bits  0..31  address of the input region in the guest's memory
//	bits 32..44  top-N: 0 asks for the full logits, 1..MaxTopN for the top-N candidates
//	bits 45..62  zero
//
// A negative result is an ErrCode.
const (
	initTopNShift = 32
	initTopNMask  = 1<<13 - 1
)

// PackInit encodes realizar_init's answer. topN is 0 (full logits) or in
// [1, MaxTopN]; stop policies answer 0.
func PackInit(addr uint32, topN int) int64 {
	return int64(addr) | int64(topN&initTopNMask)<<initTopNShift
}

// UnpackInit decodes realizar_init's result. ok is false when r is negative
// (code is then the guest's error) or when reserved bits are set or topN is
// over MaxTopN (code is then 0).
func UnpackInit(r int64) (addr uint32, topN int, code ErrCode, ok bool) {
	if r < 0 {
		if r < -1<<31 {
			return 0, 0, ErrFailed, false
		}
		return 0, 0, ErrCode(r), false
	}
	addr = uint32(r)
	rest := r >> initTopNShift
	topN = int(rest & initTopNMask)
	if rest>>13 != 0 || topN > MaxTopN {
		return 0, 0, 0, false
	}
	return addr, topN, 0, true
}

// StopAction is a stop policy's verdict, the low two bits of realizar_check's result.
type StopAction uint8

const (
	// StopContinue: go on; n is the hold-back (bytes of the generated text,
	// this token's included, that must not be released yet).
	StopContinue StopAction = 0
	// StopKeep: stop after this token, keeping its bytes; n must be 0.
	StopKeep StopAction = 1
	// StopTrim: stop and remove the last n bytes of the generated text.
	StopTrim StopAction = 2
)

// PackStop encodes realizar_check's answer: n<<2 | action, n in [0, MaxStopN].
func PackStop(action StopAction, n int) int32 {
	return int32(n)<<2 | int32(action)
}

// UnpackStop decodes realizar_check's result. ok is false when r is
// negative (code is the guest's error) or the action is not one of the three.
func UnpackStop(r int32) (action StopAction, n int, code ErrCode, ok bool) {
	if r < 0 {
		return 0, 0, ErrCode(r), false
	}
	action = StopAction(r & 3)
	if action > StopTrim {
		return 0, 0, 0, false
	}
	return action, int(r >> 2), 0, true
}

// Sizes of the regions a guest reserves at the address realizar_init
// answers, in bytes. The host writes only the input region and reads only
// the output region (processors); it never reads the input region back.
//
//	sampler, full:     input  n_vocab × f32 logits, index = token id
//	sampler, top-N:    input  N × i32 ids, then N × f32 logits
//	processor, full:   input  as the sampler; output n_vocab × (i32 id, f32 logit) edits
//	processor, top-N:  input  as the sampler; output N × (i32 id, f32 logit) edits
//	stop:              input  max_piece bytes
//	drafter (ABI 2):   no input; output MaxDraft × i32 draft token ids
//
// The output region starts right after the input region.
func InputSize(kind Kind, nVocab, topN, maxPiece int) int {
	switch kind {
	case KindSampler, KindProcessor:
		if topN > 0 {
			return topN * 8
		}
		return nVocab * 4
	case KindStop:
		return maxPiece
	}
	return 0
}

// OutputSize is the size of a processor's or a drafter's output region
// (see InputSize); 0 for other kinds.
func OutputSize(kind Kind, nVocab, topN int) int {
	if kind == KindDrafter {
		return MaxDraft * 4
	}
	if kind != KindProcessor {
		return 0
	}
	if topN > 0 {
		return topN * 8
	}
	return nVocab * 8
}
