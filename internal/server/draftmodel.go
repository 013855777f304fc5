package server

// checkDraftModel validates realizar.speculative.draft_model: true needs
// the server's draft model (serve --draft-model) and no other source.
func (s *Server) checkDraftModel(f *samplingFields) error {
	sp := f.Realizar.Speculative
	if sp.DraftModel == nil || !*sp.DraftModel {
		return nil
	}
	switch {
	case s.model == nil || s.model.Draft == nil:
		return badRequest("realizar.speculative.draft_model", "realizar.speculative.draft_model: this server has no draft model (serve --draft-model FILE)")
	case f.Prediction != nil:
		return badRequest("realizar.speculative.draft_model", "prediction and realizar.speculative.draft_model: give one draft source")
	case sp.Lookup != nil && *sp.Lookup:
		return badRequest("realizar.speculative.draft_model", "realizar.speculative.lookup and draft_model: give one draft source")
	}
	return nil
}

// speculationModel sets sp's draft model: the server's default
// (Config.DraftModel), or the request's realizar.speculative choice — a
// request that turns lookup on turns the default draft model off, and
// one that turns the draft model on turns lookup off.
func (s *Server) speculationModel(sp *speculation, f *samplingFields) {
	use := s.cfg.DraftModel
	if r := f.Realizar; r != nil && r.Speculative != nil {
		if l := r.Speculative.Lookup; l != nil && *l {
			use = false
		}
		if d := r.Speculative.DraftModel; d != nil {
			use = *d
		}
	}
	if use && s.model != nil && s.model.Draft != nil {
		sp.model, sp.lookup = s.model.Draft, false
	}
}
