package abi

// The drafter kind (ABI.md §12): a plugin that proposes the tokens a
// sequence is likely to generate next, which the host verifies in one
// pass (speculative decoding). It exists from ABI 2: its marker is
// realizar_abi_v2_drafter, and a drafter declaring ABI 1 is refused as
// an ABI version error.
const (
	// ExportDraft (drafter): (n_new i32, max i32, drafted i32, accepted i32)
	// -> i32. n_new tokens joined the sequence since realizar_reset's
	// prompt or the previous realizar_draft (read them with
	// realizar.accepted_get during the call); max is the most tokens the
	// host takes (1..MaxDraft); drafted and accepted are the outcome of the
	// previous non-empty draft (0, 0 when there was none since the
	// previous call). Returns the number k in [0, max] of token ids it
	// wrote at the output region's start (the address realizar_init
	// answered), or a negative ErrCode.
	ExportDraft = "realizar_draft"
	// MaxDraft is the longest draft a drafter is asked for, in tokens: its
	// output region holds MaxDraft i32 ids. (package draft bounds every
	// source's drafts by it.)
	MaxDraft = 32
	// MinDrafterABI is the first ABI version with the drafter kind.
	MinDrafterABI = Version2
)
