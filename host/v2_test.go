package host_test

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/engine"
	"github.com/realizar-host/realizar-host/engine/enginetest"
	"github.com/realizar-host/realizar-host/forward"
	"github.com/realizar-host/realizar-host/host"
	"github.com/realizar-host/realizar-host/tokenizer"
)

// The tokenizer gives the control and byte attributes.
var _ host.TokenTyper = (*tokenizer.Tokenizer)(nil)

// maskVocab has 1000 tokens; 999 ends a turn, 0 is a control token and
// 10 a byte token.
var maskVocab = func() *enginetest.Vocab {
	v := enginetest.NewTokenVocab(1000, map[int32]string{0: "<s>", 10: "<0x0A>"}, 999)
	v.Control, v.Byte = []int32{0}, []int32{10}
	return v
}()

func TestTokenAttrs(t *testing.T) {
	a := host.TokenAttrs(maskVocab)
	require.Len(t, a, 1000)
	assert.Equal(t, abi.PackTokenAttr(abi.AttrControl, 3), a[0])
	assert.Equal(t, abi.PackTokenAttr(abi.AttrByte, 6), a[10])
	assert.Equal(t, abi.PackTokenAttr(abi.AttrEOG, 4), a[999])
	assert.Equal(t, abi.PackTokenAttr(0, 3), a[42])
	// Without TokenTyper only EOG and the length are known.
	assert.Equal(t, abi.PackTokenAttr(0, 3), host.TokenAttrs(enginetest.NewTokenVocab(100, map[int32]string{0: "<s>"}))[0])
}

// Version 2 modules load beside version 1; the version's rules are checked.
func TestLoadV2(t *testing.T) {
	h := newHost(t, host.NewConfig())
	p := load(t, h, "mask", host.LoadOptions{})
	assert.Equal(t, abi.Version2, p.ABI())
	assert.Equal(t, abi.KindProcessor, p.Kind())
	assert.JSONEq(t, "true", string(p.Meta().X["x-test"]))
	assert.Contains(t, p.String(), "processor mask 1.0.0 (abi 2, sha256 ")
	assert.Equal(t, abi.Version, load(t, h, "greedy", host.LoadOptions{}).ABI())

	for _, tc := range []struct {
		module string
		want   error
	}{
		{"v1attrs", host.ErrForbiddenImport}, // an ABI 2 import in an ABI 1 module
		{"v2mismatch", host.ErrABIVersion},   // v2 marker, v1 metadata
		{"v2oldinit", host.ErrMissingExport}, // v2 with v1's realizar_init type
		{"badversion", host.ErrABIVersion},   // ABI 3
	} {
		t.Run(tc.module, func(t *testing.T) {
			_, err := h.Load(context.Background(), wasmFile(t, tc.module), host.LoadOptions{})
			require.ErrorIs(t, err, tc.want)
		})
	}
}

// maskedArgmax is the native reference of the mask processor followed by
// greedy: the best logit among allowed, lowest id on ties.
func maskedArgmax(logits []float32, allowed ...int32) int32 {
	best := int32(-1)
	for _, id := range allowed {
		if best < 0 || logits[id] > logits[best] || logits[id] == logits[best] && id < best {
			best = id
		}
	}
	return best
}

// The mask processor (testdata/mask.wat) keeps its mask in its memory and
// updates two bits a step; the host sets every other logit to -Inf and the
// greedy sampler picks among what is left. Each step it sees every token
// accepted since the previous step, not only the last.
func TestMaskProcessor(t *testing.T) {
	h := newHost(t, host.NewConfig())
	s := newSampler(t, maskVocab, load(t, h, "greedy", host.LoadOptions{}), load(t, h, "mask", host.LoadOptions{}))
	require.NoError(t, s.Reset(0, []int32{1, 2}))

	for _, step := range []struct {
		accept  []int32
		allowed []int32 // 1, 3, 5, the EOG token 999, 100+n_accepted, 200+sum
	}{
		{nil, []int32{1, 3, 5, 999, 100, 200}},
		{[]int32{2, 4, 7}, []int32{1, 3, 5, 999, 103, 213}},
		{[]int32{50}, []int32{1, 3, 5, 999, 101, 250}},
		{[]int32{0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, []int32{1, 3, 5, 999, 110, 200}},
	} {
		for _, tok := range step.accept {
			s.Accept(tok)
		}
		logits := randomLogits(uint64(len(step.accept)), 1000)
		logits[900] = 100 // disallowed: must not win
		want := maskedArgmax(logits, step.allowed...)
		got, err := s.Sample(logits)
		require.NoError(t, err)
		assert.Equal(t, want, got)
		finite := 0
		for id, l := range logits {
			if !math.IsInf(float64(l), -1) {
				finite++
				assert.Contains(t, step.allowed, int32(id))
			}
		}
		assert.Equal(t, len(step.allowed), finite, "every disallowed logit is -Inf")
	}
}

// Hostile mask processors: each misbehaviour is a clear error naming the
// plugin; it ends that turn only, and another Sampler of the same plugin
// is untouched.
func TestMaskProcessorHostile(t *testing.T) {
	h := newHost(t, host.NewConfig())
	greedy := load(t, h, "greedy", host.LoadOptions{})
	mask := load(t, h, "mask", host.LoadOptions{})
	other := newSampler(t, maskVocab, greedy, mask)
	require.NoError(t, other.Reset(0, nil))
	s := newSampler(t, maskVocab, greedy, mask)

	for _, tc := range []struct {
		name string
		seed uint64
		want error
		msg  string
	}{
		{"mask address outside memory", 1, host.ErrBadResult, "outside memory"},
		{"mask shorter than needed", 2, host.ErrBadResult, "shorter than needed"},
		{"traps", 3, host.ErrPluginTrap, "unreachable"},
		{"allows nothing (bits past n_vocab ignored)", 4, engine.ErrNoTokenAllowed, "no token"},
		{"returns an error code", 5, host.ErrPluginFailed, "failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.NoError(t, s.Reset(tc.seed, nil))
			_, err := s.Sample(randomLogits(1, 1000))
			require.ErrorIs(t, err, tc.want)
			var pe *host.PluginError
			require.True(t, errors.As(err, &pe), "%T %v", err, err)
			assert.Contains(t, pe.Plugin, "processor mask 1.0.0")
			assert.Contains(t, err.Error(), tc.msg)

			logits := randomLogits(2, 1000)
			got, err := other.Sample(logits)
			require.NoError(t, err, "another sequence goes on")
			assert.Equal(t, maskedArgmax(logits, 1, 3, 5, 999, 100, 200), got)

			require.NoError(t, s.Reset(0, nil), "the next turn starts afresh")
			logits = randomLogits(3, 1000)
			got, err = s.Sample(logits)
			require.NoError(t, err)
			assert.Equal(t, maskedArgmax(logits, 1, 3, 5, 999, 100, 200), got)
		})
	}

	t.Run("no mask this step", func(t *testing.T) {
		require.NoError(t, s.Reset(6, nil))
		logits := randomLogits(4, 1000)
		want := argmax(logits)
		got, err := s.Sample(logits)
		require.NoError(t, err)
		assert.Equal(t, want, got)
	})

	t.Run("allowed tokens are all -Inf", func(t *testing.T) {
		require.NoError(t, s.Reset(0, nil))
		logits := randomLogits(5, 1000)
		for _, id := range []int32{1, 3, 5, 999, 100, 200} {
			logits[id] = negInf
		}
		_, err := s.Sample(logits)
		require.ErrorIs(t, err, engine.ErrNoTokenAllowed)
	})

	t.Run("the sampler picks a disallowed token", func(t *testing.T) {
		nop := newSampler(t, maskVocab, load(t, h, "nop", host.LoadOptions{}), mask) // always answers 0
		require.NoError(t, nop.Reset(0, nil))
		_, err := nop.Sample(randomLogits(6, 1000))
		require.ErrorIs(t, err, forward.ErrBadToken)
		var pe *host.PluginError
		require.True(t, errors.As(err, &pe))
		assert.Contains(t, pe.Plugin, "sampler nop")
	})
}

// A v2 sampler receives the number of tokens accepted since its previous
// call and reads every one of them through accepted_get (testdata/acc2.wat
// answers n_accepted*100 + their sum); the count restarts at each Reset.
func TestV2SamplerAccepted(t *testing.T) {
	h := newHost(t, host.NewConfig())
	s := newSampler(t, enginetest.NewTokenVocab(1000, nil), load(t, h, "acc2", host.LoadOptions{}))
	require.NoError(t, s.Reset(0, []int32{9, 9, 9}))
	for _, step := range []struct {
		accept []int32
		want   int32
	}{
		{nil, 0},
		{[]int32{5}, 105},
		{[]int32{1, 2, 3, 4}, 410},
		{nil, 0},
		{[]int32{7, 7}, 214},
	} {
		for _, tok := range step.accept {
			s.Accept(tok)
		}
		got, err := s.Sample(make([]float32, 1000))
		require.NoError(t, err)
		assert.Equal(t, step.want, got)
	}
	s.Accept(3)
	require.NoError(t, s.Reset(1, nil))
	got, err := s.Sample(make([]float32, 1000))
	require.NoError(t, err)
	assert.Equal(t, int32(0), got, "Reset forgets what was accepted before it")
}

// A v2 stop policy finds the control tokens itself through token_attrs
// (testdata/ctlstop2.wat): no list of special tokens in its config.
func TestV2StopTokenAttrs(t *testing.T) {
	h := newHost(t, host.NewConfig())
	sp, err := host.NewStopPolicy(maskVocab, load(t, h, "ctlstop2", host.LoadOptions{}))
	require.NoError(t, err)
	defer sp.Close()
	require.NoError(t, sp.Reset())
	for token, want := range map[int32]engine.StopAction{42: engine.Continue, 10: engine.Continue, 999: engine.Continue, 0: engine.StopKeep} {
		d, err := sp.Check(token, maskVocab.Piece(token))
		require.NoError(t, err)
		assert.Equal(t, want, d.Action, token)
	}
}

// realizar_init answers the ABI 2 checks refuse, each a bad result naming
// the plugin.
func TestV2BadInit(t *testing.T) {
	h := newHost(t, host.NewConfig())
	greedy := load(t, h, "greedy", host.LoadOptions{})
	for _, tc := range []struct {
		module, msg string
		chain       func(p *host.Plugin) (*host.Sampler, error)
	}{
		{"badinit2", "has no input region", func(p *host.Plugin) (*host.Sampler, error) { return host.NewSampler(maskVocab, greedy, p) }},
		{"masksampler2", "processors only", func(p *host.Plugin) (*host.Sampler, error) { return host.NewSampler(maskVocab, p) }},
	} {
		t.Run(tc.module, func(t *testing.T) {
			s, err := tc.chain(load(t, h, tc.module, host.LoadOptions{}))
			require.NoError(t, err)
			defer s.Close()
			err = s.Reset(0, nil)
			require.ErrorIs(t, err, host.ErrBadResult)
			var pe *host.PluginError
			require.True(t, errors.As(err, &pe))
			assert.Contains(t, pe.Plugin, tc.module)
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
}
