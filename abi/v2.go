package abi

import "strconv"

// Version2 is ABI version 2 (ABI.md §11). A module declares it with the
// marker export realizar_abi_v2_<kind> and "abi":2 in its metadata; the
// host accepts versions 1 and 2, each module at the version it declares.
const Version2 = 2

// Versions are the ABI versions the host accepts, oldest first.
var Versions = [...]int{Version, Version2}

// MarkerV is the marker export of kind at ABI version v,
// e.g. "realizar_abi_v2_processor".
func (k Kind) MarkerV(v int) string {
	return MarkerPrefix + strconv.Itoa(v) + "_" + k.String()
}

// Feature is one bit of the feature set the host announces to a v2 guest
// as realizar_init's fifth argument (i64). A guest that needs a feature the
// host does not announce answers ErrFeature. Bits the guest does not know
// are to be ignored: later hosts may announce more.
type Feature uint64

const (
	// FeatureMask: a processor may answer OutputMask at init and return
	// an allowed-token bitmask by address from realizar_process.
	FeatureMask Feature = 1 << 0
	// FeatureTokenAttrs: the import realizar.token_attrs exists.
	FeatureTokenAttrs Feature = 1 << 1
	// FeatureAccepted: realizar_sample and realizar_process receive the
	// number of tokens accepted since the previous call, readable through
	// realizar.accepted_get during the call.
	FeatureAccepted Feature = 1 << 2
)

// HostFeatures is what this version of the host announces.
const HostFeatures = FeatureMask | FeatureTokenAttrs | FeatureAccepted

// ErrFeature (v2): the guest needs a feature the host did not announce.
const ErrFeature ErrCode = -5

// Output is a v2 processor's output mode, bits 45..46 of realizar_init's
// result.
type Output uint8

const (
	// OutputEdits: (id, logit) edits in the output region, as in v1.
	OutputEdits Output = 0
	// OutputMask: realizar_process returns the address of an allowed-token
	// bitmask of MaskWords(n_vocab) little-endian u32 words (bit i%32 of
	// word i/32 allows token i), or 0 for "every token allowed this
	// step". The guest keeps the mask in its own memory between calls and
	// updates only what changed; the host reads it and sets every
	// disallowed logit to -Inf before the next stage. Such a processor has
	// no input region: the host copies no logits to it (address and top-N
	// are 0, count is 0).
	OutputMask Output = 1
)

const (
	initOutputShift = 45
	initOutputMask  = 3
)

// PackInitV2 encodes a v2 realizar_init answer: PackInit's fields plus the
// output mode. A mask-mode processor answers PackInitV2(0, 0, OutputMask).
func PackInitV2(addr uint32, topN int, out Output) int64 {
	return PackInit(addr, topN) | int64(out&initOutputMask)<<initOutputShift
}

// UnpackInitV2 decodes a v2 realizar_init result as UnpackInit does, with
// the output mode. ok is false for a reserved output mode (3 or 2) or
// reserved bits 47..62.
func UnpackInitV2(r int64) (addr uint32, topN int, out Output, code ErrCode, ok bool) {
	if r < 0 {
		addr, topN, code, ok = UnpackInit(r)
		return addr, topN, 0, code, ok
	}
	out = Output(r >> initOutputShift & initOutputMask)
	if out > OutputMask || r>>(initOutputShift+2) != 0 {
		return 0, 0, 0, 0, false
	}
	addr, topN, code, ok = UnpackInit(r &^ (initOutputMask << initOutputShift))
	return addr, topN, out, code, ok
}

// MaskWords is the length in u32 words of an allowed-token mask over
// nVocab tokens: ceil(nVocab/32). Bits at or past nVocab are ignored.
func MaskWords(nVocab int) int { return (nVocab + 31) / 32 }

// TokenAttr is the u32 the import realizar.token_attrs writes per token:
// flags in bits 0..7, the piece length in bytes in bits 8..31.
type TokenAttr uint32

const (
	// AttrEOG: the token ends a turn (eos, eot, <|im_end|> ...).
	AttrEOG TokenAttr = 1 << 0
	// AttrControl: a control or unknown token ("<s>", "<|im_start|>",
	// "<unk>"): its piece is its text, but it is not text a model writes.
	AttrControl TokenAttr = 1 << 1
	// AttrByte: a byte-fallback token ("<0x0A>"); its piece is the one byte.
	AttrByte TokenAttr = 1 << 2

	attrLenShift = 8
	// MaxAttrPieceLen is the longest piece length TokenAttr can carry;
	// longer pieces are reported as this.
	MaxAttrPieceLen = 1<<24 - 1
)

// PackTokenAttr builds a token's attribute word.
func PackTokenAttr(flags TokenAttr, pieceLen int) TokenAttr {
	return flags&0xff | TokenAttr(min(pieceLen, MaxAttrPieceLen))<<attrLenShift
}

// PieceLen is the piece length in bytes carried by a.
func (a TokenAttr) PieceLen() int { return int(a >> attrLenShift) }

// Host functions added in v2 (module "realizar"). A v1 module importing
// them is refused as a forbidden import.
const (
	// ImportTokenAttrs: (first, buf_ptr, count i32) -> i32. Writes the
	// TokenAttr words (u32 little-endian) of ids first .. first+n-1, n =
	// min(count, n_vocab-first), at buf, and returns n; -1 when first is
	// outside [0, n_vocab). One call covers the whole vocabulary.
	ImportTokenAttrs = "token_attrs"
	// ImportAcceptedGet: (buf_ptr, limit i32) -> i32. During
	// realizar_sample or realizar_process, copies the first
	// min(n, limit) tokens accepted since the previous call (i32
	// little-endian, oldest first) and returns n; 0 outside those calls.
	ImportAcceptedGet = "accepted_get"
)
