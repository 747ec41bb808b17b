package httpapi

import (
	"net/http"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/admin/wire"
)

func (s *Server) eoioStatus(w http.ResponseWriter, r *http.Request) error {
	st, err := s.opts.Service.EOIOStatus(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, st)
	return nil
}

func (s *Server) eoioSwitch(w http.ResponseWriter, r *http.Request) error {
	var body wire.EOIOSwitchBody
	if err := s.decode(w, r, &body, 1<<16); err != nil {
		return refusal{error: err}
	}
	// The service checks the number, and audits a refusal.
	st, err := s.opts.Service.EOIOSwitch(r.Context(), admin.EOIOSwitchParams{Queues: string(body.Queues)})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, st)
	return nil
}
