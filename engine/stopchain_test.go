package engine

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fixedStop answers d (or err) and counts its calls.
type fixedStop struct {
	d      Decision
	err    error
	checks int
}

func (f *fixedStop) Reset() error { return f.err }
func (f *fixedStop) Check(int32, []byte) (Decision, error) {
	f.checks++
	return f.d, f.err
}

func TestStopChain(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name       string
		a, b       Decision
		errA       error
		want       Decision
		wantErr    error
		bAskedOnce bool
	}{
		{"both continue: the larger hold-back", Decision{HoldBack: 2}, Decision{HoldBack: 5}, nil, Decision{HoldBack: 5}, nil, true},
		{"the first stops: it decides", Decision{Action: StopKeep}, Decision{Action: StopTrim, Trim: 3}, nil, Decision{Action: StopKeep}, nil, false},
		{"the second stops", Decision{HoldBack: 4}, Decision{Action: StopTrim, Trim: 3}, nil, Decision{Action: StopTrim, Trim: 3}, nil, true},
		{"an error ends it", Decision{}, Decision{}, boom, Decision{}, boom, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := &fixedStop{d: tt.a, err: tt.errA}, &fixedStop{d: tt.b}
			c := StopChain{a, b}
			d, err := c.Check(7, []byte("x"))
			require.ErrorIs(t, err, tt.wantErr)
			assert.Equal(t, tt.want, d)
			assert.Equal(t, tt.bAskedOnce, b.checks == 1)
			assert.ErrorIs(t, c.Reset(), tt.errA)
		})
	}
}
