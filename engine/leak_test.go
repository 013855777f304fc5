package engine_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/engine"
)

func TestGenerateLeavesNoGoroutines(t *testing.T) {
	before := settledGoroutines()
	r := newRig(t, 64, nil)
	r.seq.Capacity = 64
	for i := range 1000 {
		cfg := engine.GenerateConfig{MaxTokens: 1 + i%16}
		prompt := []int32{int32(i % testVocab)}
		var stopCtx context.CancelFunc
		switch i % 6 {
		case 1: // deterministic cancel point
			cfg.Cancel = engine.NewCancelTokenAfter(i % 7)
		case 2: // a context cancelled mid-turn from the callback
			ctx, cancel := context.WithCancel(context.Background())
			stopCtx = cancel
			cfg.Cancel = engine.FromContext(ctx)
			cfg.OnToken = func(id int32, _ []byte) error {
				if id%3 == 0 {
					cancel()
				}
				return nil
			}
		case 3: // a context that is never cancelled (released after the turn)
			ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
			stopCtx = cancel
			cfg.Cancel = engine.FromContext(ctx)
		case 5: // a context that is never done
			cfg.Cancel = engine.FromContext(context.Background())
		case 4: // cancelled from another goroutine, waited for
			tok := engine.NewCancelToken()
			cfg.Cancel = tok
			done := make(chan struct{})
			go func() { tok.Cancel(); close(done) }()
			<-done
		}
		turn, err := r.s.Generate(prompt, cfg)
		require.NoError(t, err)
		require.NotEqual(t, engine.StopNone, turn.Stop)
		if stopCtx != nil {
			stopCtx()
		}
	}
	// Let the runtime retire finished goroutines before counting. Another
	// test's goroutine may end meanwhile, so the count may only go down.
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	assert.LessOrEqual(t, runtime.NumGoroutine(), before)
}

// settledGoroutines waits until the goroutine count is steady (the goroutines
// of earlier tests have exited) and returns it.
func settledGoroutines() int {
	n := runtime.NumGoroutine()
	for steady := 0; steady < 5; {
		time.Sleep(5 * time.Millisecond)
		if m := runtime.NumGoroutine(); m == n {
			steady++
		} else {
			n, steady = m, 0
		}
	}
	return n
}

func TestGenerateConcurrentCancel(t *testing.T) {
	// Cancel from another goroutine while the turn runs (exercised under -race).
	r := newRig(t, 4096, nil)
	tok := engine.NewCancelToken()
	started := make(chan struct{})
	done := make(chan struct{})
	go func() {
		<-started
		tok.Cancel()
		close(done)
	}()
	first := true
	turn, err := r.s.Generate([]int32{1}, engine.GenerateConfig{MaxTokens: 4000, Cancel: tok,
		OnToken: func(int32, []byte) error {
			if first {
				first = false
				close(started)
				<-done // the cancel has happened: the next poll sees it
			}
			return nil
		}})
	require.NoError(t, err)
	assert.Equal(t, engine.StopCancelled, turn.Stop)
	assert.Equal(t, 1, turn.Generated)
}
