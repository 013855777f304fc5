package server

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/realizar-host/realizar-host/host"
	"github.com/realizar-host/realizar-host/internal/tenancy"
)

// pluginObject describes an uploaded plugin.
type pluginObject struct {
	ID          string `json:"id"` // the hex sha256
	Object      string `json:"object"`
	Kind        string `json:"kind"`
	Name        string `json:"name"`
	Version     string `json:"version"`
	Description string `json:"description,omitempty"`
	Bytes       int    `json:"bytes"`
}

// handleUpload is POST /v1/plugins: the body is the module's bytes. It is
// validated exactly as the host loads plugins (host.Load: size, magic,
// metadata, ABI version, kind, exports, import allow-list, memory cap
// under the tenant's limits), then stored under its sha256 in the tenant's
// namespace. Over the tenant's size limit is a 413; a module the host
// refuses is a 400 with the reason.
func (s *Server) handleUpload(w http.ResponseWriter, r *http.Request, t *tenancy.Tenant) error {
	// An upload is a request of the tenant's rate and concurrency, and one
	// compiles at a time per tenant: a compile bomb costs its sender.
	release, err := t.Admit(time.Now())
	if err != nil {
		return err
	}
	defer release()
	if !t.StartUpload() {
		return &APIError{Status: http.StatusTooManyRequests, Type: typeRateLimit, Code: "upload_in_progress", RetryAfter: time.Second,
			Message: fmt.Sprintf("tenant %s has an upload compiling; one at a time", t.Name)}
	}
	defer t.EndUpload()
	wasm, err := readAll(w, r, t.Limits.MaxPluginBytes)
	if err != nil {
		return err
	}
	// Compiled in the tenant's namespace: another tenant's upload of the
	// same bytes does not make this one faster (nor the reverse).
	p, err := s.host.Load(r.Context(), wasm, host.LoadOptions{Limits: t.Limits.HostLimits(), Namespace: t.Name})
	if err != nil && !clientsLoadError(err) {
		return err
	}
	if err != nil {
		e := badRequest("", "invalid plugin: %v", err)
		e.Code = "invalid_plugin"
		if errors.Is(err, host.ErrTooLarge) {
			e.Status, e.Code = http.StatusRequestEntityTooLarge, "plugin_too_large"
		}
		return e
	}
	// Its compiled module stays in the cache for the tenant's requests;
	// the Plugin's own hold goes now, so an eviction frees the code.
	defer p.Close()
	sum := tenancy.SumOf(wasm)
	if err := s.store.Put(r.Context(), t.Name, sum, wasm, t.Limits.Quota()); err != nil {
		// Refused (or not stored): its compiled code goes, in memory and
		// on disk. Put succeeds for a module the tenant holds already.
		s.host.EvictModule(t.Name, wasm)
		if errors.Is(err, tenancy.ErrQuota) {
			return &APIError{Status: http.StatusTooManyRequests, Type: typeRateLimit, Code: "quota_exceeded",
				Message: fmt.Sprintf("tenant %s: %v; delete a plugin first", t.Name, err)}
		}
		return err
	}
	m := p.Meta()
	s.log.Info("plugin stored", "tenant", t.Name, "sha256", sum, "kind", p.Kind().String(), "name", m.Name)
	writeJSON(w, http.StatusOK, pluginObject{ID: sum, Object: "plugin", Kind: p.Kind().String(), Name: m.Name,
		Version: m.Version, Description: m.Description, Bytes: len(wasm)})
	return nil
}

// handleListPlugins is GET /v1/plugins: the tenant's own plugins. Their
// metadata is the store's, or read from the module's metadata section;
// nothing is compiled.
func (s *Server) handleListPlugins(w http.ResponseWriter, r *http.Request, t *tenancy.Tenant) error {
	infos, err := s.store.List(r.Context(), t.Name)
	if err != nil {
		return err
	}
	out := []pluginObject{}
	for _, info := range infos {
		m := info.Meta
		if m.Name == "" {
			wasm, err := s.store.Get(r.Context(), t.Name, info.SHA256)
			if errors.Is(err, tenancy.ErrNoPlugin) {
				continue // deleted meanwhile
			}
			if err != nil {
				return err
			}
			m, _ = tenancy.ModuleMeta(wasm)
		}
		out = append(out, pluginObject{ID: info.SHA256, Object: "plugin", Bytes: info.Bytes, Kind: m.Kind, Name: m.Name,
			Version: m.Version, Description: m.Description})
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": out})
	return nil
}

// handleDeletePlugin is DELETE /v1/plugins/{sha256}. Another tenant's
// plugin is a 404, like a missing one.
func (s *Server) handleDeletePlugin(w http.ResponseWriter, r *http.Request, t *tenancy.Tenant) error {
	sum := r.PathValue("sum")
	if !tenancy.ValidSum(sum) {
		return notFound("plugin_not_found", "plugin %s not found", sum)
	}
	// The bytes name the module's file in the compilation cache dir, also
	// when an earlier process compiled it.
	wasm, _ := s.store.Get(r.Context(), t.Name, sum)
	if err := s.store.Delete(r.Context(), t.Name, sum); err != nil {
		if errors.Is(err, tenancy.ErrNoPlugin) {
			return notFound("plugin_not_found", "plugin %s not found", sum)
		}
		return err
	}
	// Its compiled code goes too, in memory and on disk: the tenant's own
	// (another tenant holding the same module has its own).
	if wasm == nil || !s.host.EvictModule(t.Name, wasm) {
		s.host.Evict(t.Name, sum)
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": sum, "object": "plugin", "deleted": true})
	return nil
}
