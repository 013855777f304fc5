//go:build wasip1

package main

import (
	"bytes"
	"math"

	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/abi/guest"
)

const topN = 40

// The host writes the topN best candidates here, ids then logits; the edits follow.
var region struct {
	ids    [topN]int32
	logits [topN]float32
	edits  [topN]struct {
		id    int32
		logit float32
	}
}

var piece = make([]byte, 256)

//go:wasmexport realizar_abi_v1_processor
func marker() {}

//go:wasmexport realizar_init
func initPlugin(nVocab, maxPiece, configPtr, configLen int32) int64 {
	if maxPiece > int32(len(piece)) {
		return int64(abi.ErrVocab)
	}
	return abi.PackInit(guest.Address(&region), topN)
}

//go:wasmexport realizar_reset
func reset(seed int64, nPrompt int32) int32 { return 0 }

// process sets the logit of every candidate whose piece holds a comma to
// -Inf and returns the number of edits.
//
//go:wasmexport realizar_process
func process(prev, count int32) int32 {
	e := 0
	for _, id := range region.ids[:count] {
		n := min(guest.VocabPiece(id, piece), len(piece))
		if bytes.IndexByte(piece[:n], ',') >= 0 {
			region.edits[e].id, region.edits[e].logit = id, float32(math.Inf(-1))
			e++
		}
	}
	return int32(e)
}

func main() {}
