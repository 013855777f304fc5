package server

import (
	"context"
	"errors"

	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/host"
	"github.com/realizar-host/realizar-host/internal/tenancy"
)

// drafterParam is the request field of a drafter plugin: realizar.drafter
// {"plugin": a built-in name or one of the tenant's sha256s, "config": {...}},
// named as realizar.sampler and realizar.stop are.
const drafterParam = "realizar.drafter"

// buildDrafter instantiates the request's drafter plugin for t under t's
// plugin limits, its drafts bounded by draftMax (0: abi.MaxDraft). A
// config the plugin refuses at init is a 400 naming realizar.drafter;
// any other failure there, and any during the turn, costs the turn its
// drafts only (abi/ABI.md §12.3), counted in
// realizar_plugin_failures_total when the policies close.
func (s *Server) buildDrafter(ctx context.Context, t *tenancy.Tenant, ref pluginRef, draftMax int) (*host.Drafter, error) {
	pl, err := s.resolve(ctx, t, ref, abi.KindDrafter, drafterParam)
	if err != nil {
		return nil, err
	}
	defer pl.Close()
	d, err := host.NewDrafter(s.model.Tokenizer, pl)
	if err != nil {
		return nil, err
	}
	d.SetMaxDraft(draftMax)
	if d.Reset(nil); errors.Is(d.Err(), host.ErrBadConfig) {
		err := d.Err()
		_ = d.Close()
		return nil, &paramError{param: drafterParam, err: err}
	}
	return d, nil
}

// closeDrafter closes d after t's turn, counting the failure that turned
// its drafts off, if any.
func (s *Server) closeDrafter(tenant string, d *host.Drafter) error {
	if err := d.Err(); err != nil {
		s.metrics.PluginFailures.WithLabelValues(tenant, pluginFailureKind(err)).Inc()
	}
	return d.Close()
}
