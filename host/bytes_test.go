package host

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestApplyEditBytes: the in-place reading of little-endian machines and
// the field-by-field one agree, aligned or not, and both stop at the
// first id out of range having applied the edits before it.
func TestApplyEditBytes(t *testing.T) {
	encode := func(pad int, edits ...edit) []byte {
		b := make([]byte, pad+8*len(edits))
		for k, e := range edits {
			binary.LittleEndian.PutUint32(b[pad+8*k:], uint32(e.id))
			binary.LittleEndian.PutUint32(b[pad+8*k+4:], math.Float32bits(e.logit))
		}
		return b[pad:]
	}
	negInf := float32(math.Inf(-1))
	tests := []struct {
		name  string
		edits []edit
		want  []float32
		bad   int
		badID int32
	}{
		{"none", nil, []float32{1, 2, 3, 4}, -1, 0},
		{"in order, the later wins", []edit{{1, negInf}, {3, 7}, {1, 5}}, []float32{1, 5, 3, 7}, -1, 0},
		{"id past the end", []edit{{0, 9}, {4, 1}, {2, 8}}, []float32{9, 2, 3, 4}, 1, 4},
		{"negative id", []edit{{-1, 1}}, []float32{1, 2, 3, 4}, 0, -1},
	}
	for _, tt := range tests {
		for _, pad := range []int{0, 1, 4} {
			for name, apply := range map[string]func([]byte, int, []float32) (int, int32){
				"applyEditBytes": applyEditBytes, "applyEditBytesSlow": applyEditBytesSlow} {
				logits := []float32{1, 2, 3, 4}
				bad, id := apply(encode(pad, tt.edits...), len(tt.edits), logits)
				assert.Equal(t, tt.want, logits, "%s %s pad %d", tt.name, name, pad)
				assert.Equal(t, tt.bad, bad, "%s %s pad %d", tt.name, name, pad)
				assert.Equal(t, tt.badID, id, "%s %s pad %d", tt.name, name, pad)
			}
		}
	}
}
