package chatsandbox_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tetratelabs/wazero"

	"github.com/realizar-host/realizar-host/internal/chatsandbox"
	"github.com/realizar-host/realizar-host/tokenizer"
)

// FuzzRender: any template renders or is an error wrapping
// tokenizer.ErrTemplate, within the deadline (plus slack for a loaded
// machine), and never panics the host. The fuzz workers share a
// compilation cache directory so that each does not recompile the guest.
func FuzzRender(f *testing.F) {
	for _, h := range hostile {
		f.Add(h.template)
	}
	f.Add("{% for m in messages %}<|{{ m.role }}|>{{ m.content }}{% endfor %}")
	f.Add("{{ messages|length }}{{ bos_token ~ eos_token }}")
	f.Add("{% if add_generation_prompt %}x{% else %}{{ raise_exception('no') }}{% endif %}")
	dir := filepath.Join(os.TempDir(), "realizar-host-chatsandbox-fuzz")
	cache, err := wazero.NewCompilationCacheWithDir(dir)
	require.NoError(f, err)
	const timeout = 500 * time.Millisecond
	r, err := chatsandbox.New(context.Background(), chatsandbox.Config{Timeout: timeout, Cache: cache})
	require.NoError(f, err)
	f.Cleanup(func() { _ = r.Close(context.Background()) })
	f.Fuzz(func(t *testing.T, template string) {
		start := time.Now()
		_, err := r.Render(context.Background(), template, chatMsgs, tokenizer.ChatOptions{AddGenerationPrompt: true})
		if err != nil {
			require.ErrorIs(t, err, tokenizer.ErrTemplate)
		}
		require.Less(t, time.Since(start), timeout+5*time.Second)
	})
}
