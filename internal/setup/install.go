package setup

import (
	"bytes"
	"encoding/json"
	"mime"
	"net/http"
	"net/url"

	"github.com/callbus/callbus/internal/iparams"
)

// installRequest is what setup.js posts: the values of the visible, enabled fields.
type installRequest struct {
	Values map[string]any `json:"values"`
}

// installResponse is the answer: the saved file, or the problems by key ("" for
// the form as a whole).
type installResponse struct {
	Saved   string              `json:"saved,omitempty"`
	Message string              `json:"message"`
	Errors  map[string][]string `json:"errors,omitempty"`
}

const maxBody = 1 << 20

// serveInstall answers INSTALL (save) or the page's check (!save). Both validate
// the values and apply the rules between parameters, listing every problem found;
// INSTALL then verifies values without problems (the API request) and saves them.
// The check never calls the API and never writes: the page uses it to list the
// server's problems along with its own.
func (h *Handler) serveInstall(save bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		raw, ok := decodeInstall(w, r)
		if !ok {
			return
		}
		h.saving <- struct{}{}
		defer func() { <-h.saving }()
		ps := h.keepSecrets(raw)
		v, bad := h.decl.ValidatePartial(raw)
		ps = append(ps, bad...)
		if h.opts.Rules != nil {
			ps = ps.Merge(h.opts.Rules(v))
		}
		if len(ps) == 0 && save {
			ps = h.opts.Verify(r.Context(), v)
		}
		switch {
		case len(ps) > 0:
			h.opts.Logger.Info().Int("problems", len(ps)).Bool("install", save).Msg("setup: values refused")
			reply(w, http.StatusUnprocessableEntity, installResponse{Message: ps.Error(), Errors: ps.ByKey()})
		case !save:
			reply(w, http.StatusOK, installResponse{Message: "no problem found"})
		default:
			h.save(w, v)
		}
	}
}

// decodeInstall reads the posted values, or answers the request itself.
func decodeInstall(w http.ResponseWriter, r *http.Request) (map[string]any, bool) {
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		reply(w, http.StatusUnsupportedMediaType, installResponse{Message: "post the values as application/json"})
		return nil, false
	}
	if !sameOrigin(r) {
		reply(w, http.StatusForbidden, installResponse{Message: "cross-origin install refused"})
		return nil, false
	}
	var req installRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	dec.UseNumber()
	if err := dec.Decode(&req); err != nil || req.Values == nil {
		reply(w, http.StatusBadRequest, installResponse{Message: `post {"values": {key: value, …}}`})
		return nil, false
	}
	return req.Values, true
}

func (h *Handler) save(w http.ResponseWriter, v *iparams.Values) {
	if err := v.WriteFile(h.opts.ValuesFile); err != nil {
		h.opts.Logger.Error().Err(err).Msg("setup: save values")
		reply(w, http.StatusInternalServerError, installResponse{Message: "saving failed: " + err.Error()})
		return
	}
	h.opts.Logger.Info().Str("file", h.opts.ValuesFile).Msg("setup: values saved")
	reply(w, http.StatusOK, installResponse{Saved: h.opts.ValuesFile,
		Message: "Saved to " + h.opts.ValuesFile + ". Start the poller with --config " + h.opts.ValuesFile + "."})
}

// keepSecrets fills each secure value left empty with the saved one, so that the
// page never needs to know it.
func (h *Handler) keepSecrets(raw map[string]any) iparams.Problems {
	var saved map[string]any
	loaded := false
	for _, p := range h.decl.Params() {
		if !p.Secure {
			continue
		}
		if s, _ := raw[p.Key].(string); s != "" {
			continue
		}
		if !loaded {
			var err error
			if saved, err = readRaw(h.opts.ValuesFile); err != nil {
				return iparams.Problems{{Message: "read the saved values to keep their secure ones: " + err.Error()}}
			}
			loaded = true
		}
		if v, ok := saved[p.Key]; ok {
			raw[p.Key] = v
		}
	}
	return nil
}

// sameOrigin refuses a post whose Origin header names another host than the one
// the page was served from.
func sameOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true // not a browser's cross-origin request
	}
	u, err := url.Parse(origin)
	return err == nil && u.Host == r.Host
}

func reply(w http.ResponseWriter, status int, body installResponse) {
	var b bytes.Buffer
	_ = json.NewEncoder(&b).Encode(body)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}
