package engine

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every layer wraps them with %w, so callers test with errors.Is.
var (
	// ErrEmptyPrompt: a turn was asked for with no prompt tokens.
	ErrEmptyPrompt = errors.New("engine: empty prompt")
	// ErrNoTokenAllowed: a processor's allowed-token mask (ABI 2) left no
	// token that can be sampled (it allows none, or only tokens whose
	// logit is already -Inf). The turn ends rather than sampling from an
	// empty set.
	ErrNoTokenAllowed = errors.New("engine: the token mask allows no token")
	// ErrCancelled: the turn's CancelToken fired.
	ErrCancelled = errors.New("engine: cancelled")
)

// PolicyError reports a failure inside a policy (sampler or stop policy)
// during a turn. It unwraps to the cause (forward.ErrBadToken, or a plugin's
// host.PluginError: find it with errors.As). The Session wraps a policy's
// error once; an error that already is a PolicyError is returned as is.
type PolicyError struct {
	Policy string // the role and, for a Named policy, its name: "sampler", "stop policy strings"
	Err    error
}

func (e *PolicyError) Error() string { return fmt.Sprintf("policy %s: %v", e.Policy, e.Err) }
func (e *PolicyError) Unwrap() error { return e.Err }

// More sentinels, used by the Session. The forward's own (ErrBadToken,
// ErrContextExceeded, ErrBadLogits) are declared in package forward.
var (
	// ErrBadConfig: a GenerateConfig or Session option value is
	// out of range (MaxTokens <= 0, no sampler, a negative context ...).
	ErrBadConfig = errors.New("engine: invalid configuration")
)
