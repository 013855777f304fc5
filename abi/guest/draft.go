package guest

import "github.com/realizar-host/realizar-host/abi"

// DraftRegion is a drafter's draft region (ABI.md §12): abi.MaxDraft token
// ids that the host reads after realizar_draft. Keep it in a global (the Go
// heap does not move objects) and answer its address at init:
//
//	var region guest.DraftRegion
//	//go:wasmexport realizar_init
//	func initialize(nVocab, maxPiece, cfgPtr, cfgLen int32, features int64) int64 {
//		return abi.PackInitV2(guest.Address(&region[0]), 0, abi.OutputEdits)
//	}
//
// realizar_draft then reads the new tokens with Accepted and answers
// region.Put(draft, max).
type DraftRegion [abi.MaxDraft]int32

// Put copies the first min(len(draft), limit, abi.MaxDraft) ids of draft
// into the region and returns their number, realizar_draft's answer
// (limit is realizar_draft's max).
func (r *DraftRegion) Put(draft []int32, limit int32) int32 {
	n := copy(r[:min(int(max(limit, 0)), len(r))], draft)
	return int32(n)
}
