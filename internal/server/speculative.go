package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/realizar-host/realizar-host/engine"
	"github.com/realizar-host/realizar-host/internal/draft"
	"github.com/realizar-host/realizar-host/tokenizer"
)

// predictionField is OpenAI's Predicted Outputs field, prediction:
// {"type": "content", "content": a string or an array of text parts}.
type predictionField struct {
	text string
}

func (p *predictionField) UnmarshalJSON(b []byte) error {
	bad := &fieldError{param: "prediction", msg: `prediction must be {"type": "content", "content": a string or an array of {"type": "text", "text": ...} parts}`}
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		return nil
	}
	var f struct {
		Type    string          `json:"type"`
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(b, &f) != nil || f.Type != "content" || !present(f.Content) {
		return bad
	}
	if json.Unmarshal(f.Content, &p.text) == nil {
		return nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(f.Content, &parts) != nil {
		return bad
	}
	for _, part := range parts {
		if part.Type != "text" {
			return bad
		}
		p.text += part.Text
	}
	return nil
}

// speculativeRequest is the realizar.speculative extension: the draft
// source of a request without a prediction, and the longest draft.
type speculativeRequest struct {
	// Lookup turns n-gram lookup over the request's own prompt and output
	// on or off; absent means the server's default (serve --spec).
	Lookup *bool `json:"lookup"`
	// DraftModel turns drafting with the server's draft model (serve
	// --draft-model) on or off; absent means the server's default (serve
	// --spec).
	DraftModel *bool `json:"draft_model"`
	// DraftMax is the longest draft in tokens, 1..draft.MaxDraft; absent means
	// the server's (serve --draft-max), else the source's default.
	DraftMax *int `json:"draft_max"`
}

// UnmarshalJSON refuses a key realizar.speculative does not have
// ({"ngram": true}), naming it, rather than ignoring it.
func (sp *speculativeRequest) UnmarshalJSON(b []byte) error {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(b, &keys); err != nil {
		return &fieldError{param: "realizar.speculative", msg: "realizar.speculative must be an object"}
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if k != "lookup" && k != "draft_model" && k != "draft_max" {
			return &fieldError{param: "realizar.speculative." + k,
				msg: fmt.Sprintf("realizar.speculative has no field %q: it takes lookup, draft_model and draft_max", k)}
		}
	}
	type plain speculativeRequest
	err := json.Unmarshal(b, (*plain)(sp))
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) && typeErr.Field != "" {
		field := "realizar.speculative." + typeErr.Field
		return &fieldError{param: field, msg: fmt.Sprintf("%s must be %s, not %s", field, wantedJSON(typeErr.Type, typeErr.Value), jsonValue(typeErr.Value))}
	}
	return err
}

// speculation is what a request's drafts come from: its prediction
// (tokenized once the request is admitted), or n-gram lookup, or nothing.
// Each turn gets a drafter of its own (drafter): nothing is shared between
// requests, so no tenant's text reaches another's drafts.
type speculation struct {
	prediction []int32
	predicted  bool // the request gave a prediction (usage reports it)
	lookup     bool
	model      *draft.Model // the server's draft model drafts (speculationModel)
	draftMax   int
}

// checkSpeculative validates prediction and realizar.speculative.
func (s *Server) checkSpeculative(f *samplingFields) error {
	if f.Prediction != nil {
		if err := s.checkPromptBytes("prediction", len(f.Prediction.text)); err != nil {
			return err
		}
	}
	if f.Prediction != nil && f.Realizar != nil && f.Realizar.Drafter != nil {
		return badRequest(drafterParam, "prediction and realizar.drafter: give one draft source")
	}
	if f.Realizar == nil || f.Realizar.Speculative == nil {
		return nil
	}
	sp := f.Realizar.Speculative
	if sp.DraftMax != nil && (*sp.DraftMax < 1 || *sp.DraftMax > draft.MaxDraft) {
		return badRequest("realizar.speculative.draft_max", "realizar.speculative.draft_max must be in [1, %d], not %d", draft.MaxDraft, *sp.DraftMax)
	}
	if f.Prediction != nil && sp.Lookup != nil && *sp.Lookup {
		return badRequest("realizar.speculative.lookup", "prediction and realizar.speculative.lookup: give one draft source")
	}
	if f.Realizar.Drafter != nil && sp.Lookup != nil && *sp.Lookup {
		return badRequest(drafterParam, "realizar.drafter and realizar.speculative.lookup: give one draft source")
	}
	if f.Realizar.Drafter != nil && sp.DraftModel != nil && *sp.DraftModel {
		return badRequest(drafterParam, "realizar.drafter and realizar.speculative.draft_model: give one draft source")
	}
	return s.checkDraftModel(f)
}

// speculationOf is p's draft source, with the server's defaults for what
// the request leaves out; the prediction is tokenized as text (no BOS, no
// special tokens), as the model would write it.
func (s *Server) speculationOf(p *prepared) speculation {
	f := p.fields
	sp := speculation{lookup: s.cfg.Lookup, draftMax: s.cfg.DraftMax}
	if r := f.Realizar; r != nil && r.Speculative != nil {
		if r.Speculative.Lookup != nil {
			sp.lookup = *r.Speculative.Lookup
		}
		if r.Speculative.DraftMax != nil {
			sp.draftMax = *r.Speculative.DraftMax
		}
	}
	s.speculationModel(&sp, f)
	if r := f.Realizar; r != nil && r.Drafter != nil {
		sp.lookup, sp.model = false, nil // the drafter plugin drafts (policies.drafter)
	}
	if f.Prediction != nil {
		sp.predicted, sp.lookup, sp.model = true, false, nil
		sp.prediction = s.model.Tokenizer.Encode(f.Prediction.text, tokenizer.EncodeOptions{})
	}
	return sp
}

// drafter is a new Drafter for one turn, or nil without a source: the
// request's drafter plugin (realizar.drafter, instantiated with pol), its
// prediction, the draft model (whose drafter stops drafting once cancel
// is), or lookup.
func (sp speculation) drafter(pol *policies, cancel *engine.CancelToken) engine.Drafter {
	switch {
	case pol != nil && pol.drafter != nil:
		return pol.drafter
	case sp.predicted:
		return draft.NewPrediction(sp.prediction, draft.PredictionOptions{MaxDraft: sp.draftMax})
	case sp.model != nil:
		return sp.model.Drafter(draft.ModelOptions{MaxDraft: sp.draftMax, Cancel: cancel})
	case sp.lookup:
		return draft.NewLookup(draft.LookupOptions{MaxDraft: sp.draftMax})
	}
	return nil
}

// completionTokensDetails is OpenAI's usage.completion_tokens_details for
// Predicted Outputs: the prediction's tokens that the completion kept and
// those it did not (draft tokens verified and rejected). completion_tokens
// counts the generated tokens only (OpenAI bills rejected ones too).
type completionTokensDetails struct {
	AcceptedPredictionTokens int `json:"accepted_prediction_tokens"`
	RejectedPredictionTokens int `json:"rejected_prediction_tokens"`
}

// usageOf is a turn's usage: with a prediction, its details.
func usageOf(p *prepared, t engine.Turn) *usage {
	u := &usage{PromptTokens: len(p.prompt), CompletionTokens: t.Generated, TotalTokens: len(p.prompt) + t.Generated}
	if p.spec.predicted {
		u.CompletionTokensDetails = &completionTokensDetails{AcceptedPredictionTokens: t.Drafts.Accepted,
			RejectedPredictionTokens: t.Drafts.Drafted - t.Drafts.Accepted}
	}
	return u
}

// draftsResponse is realizar.drafts: a speculative turn's drafts.
type draftsResponse struct {
	Drafted  int `json:"drafted"`
	Accepted int `json:"accepted"`
	Passes   int `json:"passes"`
}

// draftsOf is realizar.drafts for a turn that drafted, else nil.
func draftsOf(t engine.Turn) *draftsResponse {
	if t.Drafts.Passes == 0 {
		return nil
	}
	return &draftsResponse{Drafted: t.Drafts.Drafted, Accepted: t.Drafts.Accepted, Passes: t.Drafts.Passes}
}
