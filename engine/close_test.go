package engine_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/engine"
	"github.com/realizar-host/realizar-host/engine/enginetest"
	"github.com/realizar-host/realizar-host/forward"
)

// closingSampler is Greedy that counts Close calls.
type closingSampler struct {
	enginetest.Greedy
	closed int
	err    error
}

func (c *closingSampler) Close() error { c.closed++; return c.err }

type closingStop struct {
	*enginetest.MaxTokens
	closed int
}

func (c *closingStop) Close() error { c.closed++; return nil }

// TestSessionClose: Close closes the Session's own policies once, joins
// their errors, and leaves per-turn policies to their caller.
func TestSessionClose(t *testing.T) {
	vocab := enginetest.NewCountingVocab(8)
	fwd, err := forward.NewSequenceForward(enginetest.NewCountingSequence(8), forward.Options{ModelContext: 32})
	require.NoError(t, err)
	boom := errors.New("boom")
	own := &closingSampler{err: boom}
	stop := &closingStop{MaxTokens: &enginetest.MaxTokens{N: 2}}
	perTurn := &closingSampler{}
	s, err := engine.NewSession(fwd, vocab, engine.WithSampler(own), engine.WithStopPolicy(stop))
	require.NoError(t, err)
	_, err = s.Generate([]int32{1}, engine.GenerateConfig{MaxTokens: 4, Sampler: perTurn})
	require.NoError(t, err)
	assert.ErrorIs(t, s.Close(), boom)
	assert.Equal(t, 1, own.closed)
	assert.Equal(t, 1, stop.closed)
	assert.Equal(t, 0, perTurn.closed, "a per-turn sampler belongs to the caller")
	require.NoError(t, s.Close())
	assert.Equal(t, 1, own.closed, "closed once")
}
