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

var errTrap = errors.New("wasm trap: unreachable")

// faultySampler is greedy until its fault: Reset fails, or the n-th Sample
// fails or returns id.
type faultySampler struct {
	enginetest.Greedy
	resetErr error
	n        int   // the Sample call that misbehaves (1-based); 0 = none
	id       int32 // returned by the faulty Sample when err is nil
	err      error
	calls    int
}

func (s *faultySampler) Name() string { return "faulty" }

func (s *faultySampler) Reset(seed uint64, prompt []int32) error {
	s.calls = 0
	return s.resetErr
}

func (s *faultySampler) Sample(logits []float32) (int32, error) {
	s.calls++
	if s.calls == s.n {
		return s.id, s.err
	}
	return s.Greedy.Sample(logits)
}

// faultyStop fails its Reset, or answers decision (or err) on the n-th Check.
type faultyStop struct {
	resetErr error
	n        int
	decision engine.Decision
	err      error
	calls    int
}

func (p *faultyStop) Reset() error { p.calls = 0; return p.resetErr }

func (p *faultyStop) Check(int32, []byte) (engine.Decision, error) {
	p.calls++
	if p.calls == p.n {
		return p.decision, p.err
	}
	return engine.Decision{}, nil
}

func TestGeneratePolicyErrors(t *testing.T) {
	tests := []struct {
		name       string
		sampler    engine.Sampler
		stop       engine.StopPolicy
		wantPolicy string
		wantErr    error
		wantGen    int
	}{
		{"sampler reset traps", &faultySampler{resetErr: errTrap}, nil, "sampler faulty", errTrap, 0},
		{"sampler traps", &faultySampler{n: 3, err: errTrap}, nil, "sampler faulty", errTrap, 2},
		{"sampler id too large", &faultySampler{n: 2, id: testVocab}, nil, "sampler faulty", forward.ErrBadToken, 1},
		{"sampler id negative", &faultySampler{n: 1, id: -1}, nil, "sampler faulty", forward.ErrBadToken, 0},
		{"sampler's own PolicyError is not wrapped again", &faultySampler{n: 2, err: &engine.PolicyError{Policy: "inner", Err: errTrap}},
			nil, "inner", errTrap, 1},
		{"stop reset traps", nil, &faultyStop{resetErr: errTrap}, "stop policy", errTrap, 0},
		{"stop check traps", nil, &faultyStop{n: 2, err: errTrap}, "stop policy", errTrap, 2},
		{"stop action invalid", nil, &faultyStop{n: 1, decision: engine.Decision{Action: 9}},
			"stop policy", nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, 64, nil)
			turn, err := r.s.Generate([]int32{1, 2}, engine.GenerateConfig{MaxTokens: 8, Sampler: tt.sampler, Stop: tt.stop})
			var pe *engine.PolicyError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, tt.wantPolicy, pe.Policy)
			if tt.wantErr != nil {
				assert.ErrorIs(t, err, tt.wantErr)
			}
			assert.Contains(t, err.Error(), tt.wantPolicy)
			assert.Equal(t, tt.wantGen, turn.Generated)
			assert.Equal(t, engine.StopNone, turn.Stop)

			// The Session stays usable: the next turn extends what the state
			// holds and runs to its budget.
			next, err := r.s.Generate([]int32{1, 2}, engine.GenerateConfig{MaxTokens: 3})
			require.NoError(t, err)
			assert.Equal(t, []int32{3, 4, 5}, next.GeneratedTokens())
		})
	}
}

func TestGenerateSessionAndTurnPolicies(t *testing.T) {
	stop := enginetest.NewStringsStop("5 ")
	r := newRig(t, 64, nil, engine.WithStopPolicy(stop))
	turn, err := r.s.Generate([]int32{1}, engine.GenerateConfig{MaxTokens: 10})
	require.NoError(t, err)
	assert.Equal(t, engine.StopByPolicy, turn.Stop)
	assert.Equal(t, "2 3 4 ", string(turn.Text), "the Session's stop policy")

	turn, err = r.s.Generate([]int32{1}, engine.GenerateConfig{MaxTokens: 10, Stop: &enginetest.MaxTokens{N: 2}})
	require.NoError(t, err)
	assert.Equal(t, engine.StopByPolicy, turn.Stop)
	assert.Equal(t, "2 3 ", string(turn.Text), "the turn's policy replaces the Session's")
}
