package chatsandbox_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tetratelabs/wazero"

	"github.com/realizar-host/realizar-host/internal/chatsandbox"
)

// Cancelling New's context stops the guest's compilation (wazero checks
// it between functions): the CLI's SIGINT during a model's load returns at
// once instead of after the whole 11.7 MB compilation (seconds).
func TestNewCancelledDuringCompilation(t *testing.T) {
	cache := wazero.NewCompilationCache() // cold: a real compilation
	defer cache.Close(context.Background())
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	r, err := chatsandbox.New(ctx, chatsandbox.Config{Cache: cache})
	if err == nil {
		_ = r.Close(context.Background())
	}
	require.Error(t, err)
	assert.True(t, errors.Is(err, context.Canceled), "%v", err)
	t.Logf("New returned %v after cancellation at 100ms: %v", time.Since(start).Round(time.Millisecond), err)
}
