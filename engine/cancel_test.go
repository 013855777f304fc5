package engine

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCancelTokenBudget(t *testing.T) {
	tests := []struct {
		name       string
		budget     int
		polls      int
		wantFirstN int // index (1-based) of the first poll reporting cancelled; 0 = none
	}{
		{"budget 8: the 9th poll cancels", 8, 12, 9},
		{"budget 0: the first poll cancels", 0, 3, 1},
		{"no budget", -1, 100, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewCancelTokenAfter(tt.budget)
			first := 0
			for i := 1; i <= tt.polls; i++ {
				if c.Poll() && first == 0 {
					first = i
				}
			}
			assert.Equal(t, tt.wantFirstN, first)
			assert.Equal(t, tt.polls, c.Polls())
			assert.Equal(t, tt.wantFirstN > 0, c.Cancelled(), "cancellation is sticky")
		})
	}
}

func TestCancelTokenCancel(t *testing.T) {
	c := NewCancelToken()
	assert.False(t, c.Poll())
	assert.NoError(t, c.Err())
	c.Cancel()
	c.Cancel()
	assert.True(t, c.Cancelled())
	assert.Equal(t, 1, c.Polls(), "Cancelled does not count a poll")
	assert.True(t, c.Poll())
	assert.ErrorIs(t, c.Err(), ErrCancelled)
}

func TestCancelTokenNil(t *testing.T) {
	var c *CancelToken
	assert.False(t, c.Poll())
	assert.False(t, c.Cancelled())
	assert.Zero(t, c.Polls())
	assert.NoError(t, c.Err())
	c.Cancel() // no panic
}

func TestFromContext(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	c := FromContext(ctx)
	assert.False(t, c.Poll())
	why := errors.New("client went away")
	cancel(why)
	assert.True(t, c.Poll())
	err := c.Err()
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrCancelled)
	assert.ErrorIs(t, err, why)

	d, stop := context.WithTimeout(context.Background(), 0)
	defer stop()
	<-d.Done()
	assert.ErrorIs(t, FromContext(d).Err(), context.DeadlineExceeded)
}
