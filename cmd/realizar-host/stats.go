package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/realizar-host/realizar-host/engine"
	"github.com/realizar-host/realizar-host/forward"
	"github.com/realizar-host/realizar-host/host"
)

// statsLine is the one-line summary of a turn printed on stderr:
//
//	prompt 5 tok (reused 0) | generated 60 tok | prefill 812.3 tok/s | decode 402.1 tok/s | policies 9.8 µs/step | stop max-tokens | seed 42
//
// decode is the tokens chosen after the first over the decode phase's wall
// time (forwards, policies and drafting together: Timings.DecodeWall), so
// plain and speculative runs compare. With a draft source (spec) a part
// after decode counts the drafts: "drafts 40 accepted / 8 rejected in 12
// passes". A turn that ended with err (the error line follows) shows
// "stop error", not engine.StopNone's "none".
func statsLine(t engine.Turn, spec bool, err error) string {
	tm := t.Timings
	parts := []string{
		fmt.Sprintf("prompt %d tok (reused %d)", len(t.Tokens)-t.Generated, t.Reused),
		fmt.Sprintf("generated %d tok", t.Generated),
		"prefill " + rate(tm.PrefillTokens, tm.Prefill),
		"decode " + rate(tm.DecodeTokens, tm.DecodeWall),
	}
	if spec {
		d := t.Drafts
		parts = append(parts, fmt.Sprintf("drafts %d accepted / %d rejected in %s", d.Accepted, d.Drafted-d.Accepted, passes(d.Passes)))
	}
	parts = append(parts,
		"policies "+perStep(tm.Policies, t.Generated),
		"stop "+stopReason(t, err),
		fmt.Sprintf("seed %d", t.Seed),
	)
	return strings.Join(parts, " | ")
}

// passes is n verify passes as text: "1 pass", "12 passes".
func passes(n int) string {
	if n == 1 {
		return "1 pass"
	}
	return fmt.Sprintf("%d passes", n)
}

// stopReason is t's stop reason, or "error" for a turn that err ended.
func stopReason(t engine.Turn, err error) string {
	if err != nil && t.Stop == engine.StopNone {
		return "error"
	}
	return t.Stop.String()
}

// rate formats n items over d as "123.4 tok/s", "-" when nothing ran.
func rate(n int, d time.Duration) string {
	if n == 0 || d <= 0 {
		return "- tok/s"
	}
	return fmt.Sprintf("%.1f tok/s", tokPerSec(n, d))
}

func tokPerSec(n int, d time.Duration) float64 {
	if n == 0 || d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// perStep formats d over steps as microseconds per step.
func perStep(d time.Duration, steps int) string {
	if steps == 0 {
		return "- µs/step"
	}
	return fmt.Sprintf("%.1f µs/step", microsPerStep(d, steps))
}

func microsPerStep(d time.Duration, steps int) float64 {
	if steps == 0 {
		return 0
	}
	return float64(d.Microseconds()) / float64(steps)
}

func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// turnJSON is run's --json document.
type turnJSON struct {
	Text         string        `json:"text"`
	Tokens       []int32       `json:"tokens"` // generated ids
	PromptTokens int           `json:"prompt_tokens"`
	Reused       int           `json:"reused_tokens"`
	StopReason   string        `json:"stop_reason"`
	Seed         uint64        `json:"seed"`
	Sampler      string        `json:"sampler"`
	StopPolicy   string        `json:"stop_policy,omitempty"`
	Policies     []string      `json:"policies"` // every plugin of the turn: processors in order, the sampler, the stop policy
	Timings      timingsJSON   `json:"timings"`
	Drafts       *draftsJSON   `json:"drafts,omitempty"` // with a draft source
	Logprobs     []logprobJSON `json:"logprobs,omitempty"`
	Error        string        `json:"error,omitempty"`
}

type timingsJSON struct {
	LoadMs           float64 `json:"load_ms"`
	PrefillMs        float64 `json:"prefill_ms"`
	PrefillTokens    int     `json:"prefill_tokens"`
	PrefillTokPerSec float64 `json:"prefill_tok_per_s"`
	DecodeMs         float64 `json:"decode_ms"`
	DecodeTokens     int     `json:"decode_tokens"`
	DecodeTokPerSec  float64 `json:"decode_tok_per_s"`
	PolicyUsPerStep  float64 `json:"policy_us_per_step"`
}

// draftsJSON counts speculative decoding's drafts (engine.DraftStats).
type draftsJSON struct {
	Drafted  int `json:"drafted"`
	Accepted int `json:"accepted"`
	Rejected int `json:"rejected"`
	Passes   int `json:"verify_passes"`
	Rows     int `json:"verify_rows"`
}

type logprobJSON struct {
	Token   int32        `json:"token"`
	Text    string       `json:"text"`
	Logprob float32      `json:"logprob"`
	Top     []altLogprob `json:"top,omitempty"`
}

type altLogprob struct {
	Token   int32   `json:"token"`
	Text    string  `json:"text"`
	Logprob float32 `json:"logprob"`
}

// newTurnJSON builds the document of turn t, whose tokens text renders
// (the logprobs' texts as the turn's text shows them).
func newTurnJSON(t engine.Turn, text engine.Pieces, load time.Duration, pol *policies, spec bool, err error) turnJSON {
	tm := t.Timings
	doc := turnJSON{
		Text:         string(t.Text),
		Tokens:       []int32{},
		PromptTokens: len(t.Tokens) - t.Generated,
		Reused:       t.Reused,
		StopReason:   stopReason(t, err),
		Seed:         t.Seed,
		Sampler:      pol.samplerName,
		StopPolicy:   pol.stopName,
		Policies:     append([]string{}, pol.Labels...),
		Timings: timingsJSON{
			LoadMs:           millis(load),
			PrefillMs:        millis(tm.Prefill),
			PrefillTokens:    tm.PrefillTokens,
			PrefillTokPerSec: tokPerSec(tm.PrefillTokens, tm.Prefill),
			DecodeMs:         millis(tm.DecodeWall),
			DecodeTokens:     tm.DecodeTokens,
			DecodeTokPerSec:  tokPerSec(tm.DecodeTokens, tm.DecodeWall),
			PolicyUsPerStep:  microsPerStep(tm.Policies, t.Generated),
		},
	}
	if t.Tokens != nil {
		doc.Tokens = append(doc.Tokens, t.GeneratedTokens()...)
	}
	if spec {
		d := t.Drafts
		doc.Drafts = &draftsJSON{Drafted: d.Drafted, Accepted: d.Accepted, Rejected: d.Drafted - d.Accepted, Passes: d.Passes, Rows: d.Rows}
	}
	for _, s := range t.Logprobs {
		lp := logprobJSON{Token: s.Token, Text: string(text.Piece(s.Token)), Logprob: s.Logprob}
		for _, a := range s.Top {
			lp.Top = append(lp.Top, altLogprob{Token: a.Token, Text: string(text.Piece(a.Token)), Logprob: a.Logprob})
		}
		doc.Logprobs = append(doc.Logprobs, lp)
	}
	if err != nil {
		doc.Error = errorText(err)
	}
	return doc
}

// errorText is the message of err as the command prints it: for a
// plugin's failure, the *host.PluginError (which names the plugin; the
// Session's frame adds only the role).
//
// A config the plugin refused is shown by what the plugin logged: "sampler
// standard 1.0.0 (sha256 2b5644047386) refused its config: unknown key
// temprature (the keys are …)".
func errorText(err error) string {
	var pe *host.PluginError
	if !errors.As(err, &pe) {
		return err.Error()
	}
	if errors.Is(pe.Err, host.ErrBadConfig) && pe.LastLog != "" {
		line := strings.TrimPrefix(strings.TrimPrefix(pe.LastLog, "[error] "), "config: ")
		return fmt.Sprintf("%s refused its config: %s", pe.Plugin, line)
	}
	return pe.Error()
}

// turnError gives a failed turn's error its exit status.
func turnError(err error) error {
	var pe *engine.PolicyError
	var plug *host.PluginError
	switch {
	case errors.Is(err, forward.ErrContextExceeded):
		return &cmdError{code: exitContext, err: fmt.Errorf("%w (a larger --ctx-size, up to the model's trained context, may help)", err)}
	case errors.As(err, &pe), errors.As(err, &plug):
		return badPlugin(errors.New(errorText(err)))
	}
	return failure(err)
}
