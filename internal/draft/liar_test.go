package draft_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/engine"
	"github.com/realizar-host/realizar-host/forward"
	"github.com/realizar-host/realizar-host/gguf"
	"github.com/realizar-host/realizar-host/host"
	"github.com/realizar-host/realizar-host/internal/testenv"
	"github.com/realizar-host/realizar-host/model"
	"github.com/realizar-host/realizar-host/tokenizer"
)

// TestLyingDrafter: a drafter plugin's drafts never change the text. The
// test drafter (host/testdata/drafter.wat) drafts wrong tokens, traps,
// loops past its deadline or drafts ids outside the vocabulary; under
// each, on stories260K, the turn gives the plain turn's ids, text,
// logprobs, stop reason and policy calls, and the failing ones stop
// drafting (Err) while the turn goes on.
func TestLyingDrafter(t *testing.T) {
	ctx := context.Background()
	h, err := host.New(ctx, host.NewConfig().WithLimits(host.Limits{CallTimeout: time.Minute}))
	require.NoError(t, err)
	defer h.Close(ctx)
	f, err := gguf.Open(testenv.Stories())
	require.NoError(t, err)
	defer f.Close()
	tok, err := tokenizer.FromGGUF(f)
	require.NoError(t, err)
	m, err := model.Load(f, model.Options{Threads: 2})
	require.NoError(t, err)
	defer m.Close()
	fwd, err := forward.NewSequenceForward(m.NewSequence(), forward.Options{Arch: m.Config().Arch, ModelContext: m.Config().ContextLength})
	require.NoError(t, err)
	text := tok.Renderer(tokenizer.RenderOptions{})
	prompt := tok.Encode("Once upon a time, there was a little", tokenizer.EncodeOptions{AddSpecial: true})
	wasm, err := os.ReadFile(filepath.Join("..", "..", "host", "testdata", "drafter.wasm"))
	require.NoError(t, err)

	for _, pc := range policyCases(tok)[:3] { // greedy, standard with every stage, standard defaults
		t.Run(pc.name, func(t *testing.T) {
			sampler, err := host.NewSampler(tok, load(t, h, pc.sampler, pc.samplerCf, abi.KindSampler))
			require.NoError(t, err)
			defer sampler.Close()
			rec := &recorder{}
			sess, err := engine.NewSession(fwd, text, engine.WithSampler(recSampler{sampler, rec}))
			require.NoError(t, err)
			defer sess.Close()
			turn := func(d engine.Drafter) (engine.Turn, []string) {
				sess.Forget()
				rec.calls = nil
				seed := pc.seed
				got, err := sess.Generate(prompt, engine.GenerateConfig{MaxTokens: 64, Seed: &seed, TopLogprobs: 2, Draft: d})
				require.NoError(t, err)
				return got, rec.calls
			}
			plain, calls := turn(nil)
			for _, tt := range []struct {
				mode int
				want error // nil: it keeps drafting, wrongly
			}{{0, nil}, {1, host.ErrPluginTrap}, {2, host.ErrPluginTimeout}, {3, forward.ErrBadToken}, {4, host.ErrBadResult}} {
				limits := host.Limits{CallTimeout: time.Minute}
				if tt.mode == 2 { // loops: cut by its own deadline
					limits.CallTimeout = 200 * time.Millisecond
				}
				p, err := h.Load(ctx, wasm, host.LoadOptions{Kind: abi.KindDrafter, Limits: limits, Config: []byte(fmt.Sprintf(`{"mode":%d}`, tt.mode))})
				require.NoError(t, err)
				d, err := host.NewDrafter(tok, p)
				require.NoError(t, err)
				spec, specCalls := turn(d)
				name := fmt.Sprintf("mode %d", tt.mode)
				assert.Equal(t, plain.GeneratedTokens(), spec.GeneratedTokens(), "%s: token ids", name)
				assert.Equal(t, string(plain.Text), string(spec.Text), "%s: text", name)
				assert.Equal(t, plain.Logprobs, spec.Logprobs, "%s: logprobs", name)
				assert.Equal(t, plain.Stop, spec.Stop, "%s: stop reason", name)
				require.Equal(t, calls, specCalls, "%s: the policies' calls", name)
				if tt.want == nil {
					require.NoError(t, d.Err())
					assert.Greater(t, spec.Drafts.Drafted, spec.Drafts.Accepted, "%s: wrong drafts are rejected", name)
				} else {
					require.ErrorIs(t, d.Err(), tt.want, name)
					assert.Zero(t, spec.Drafts.Drafted, name)
				}
				_ = d.Close()
			}
		})
	}
}
