package sim

import (
	"net/http"
	"strings"
)

// routes builds the mux: the 17 operations of the spec (user statuses under both
// spellings), a JSON 404 for every other /api/v1 path, and the download URLs.
func (s *Sim) routes() http.Handler {
	mux := http.NewServeMux()
	api := func(pattern string, h func(*reqCtx)) { mux.Handle(pattern, s.api(h)) }
	api("GET /api/v1/users", s.listUsers)
	api("POST /api/v1/users", s.createUser)
	api("GET /api/v1/users/{user_id}", s.getUser)
	api("PUT /api/v1/users/{user_id}", s.updateUser)
	api("GET /api/v1/user-statuses", s.listStatuses)
	api("GET /api/v1/user_statuses", s.listStatuses)
	api("GET /api/v1/teams", s.listTeams)
	api("POST /api/v1/teams", s.createTeam)
	api("GET /api/v1/teams/{team_id}", s.getTeam)
	api("PUT /api/v1/teams/{team_id}", s.updateTeam)
	api("GET /api/v1/calls", s.listCalls)
	api("GET /api/v1/calls/{call_id}", s.getCall)
	api("GET /api/v1/call_metrics", s.listMetrics)
	api("GET /api/v1/calls/{call_id}/call_metrics", s.getMetric)
	api("GET /api/v1/calls/{call_id}/recording/{recording_id}", s.downloadRecording)
	api("DELETE /api/v1/calls/{call_id}/recording/{recording_id}", s.deleteRecording)
	api("POST /api/v1/account/export", s.export)
	api("GET /api/v1/jobs/{job_id}", s.getJob)
	api("/api/v1/", func(rc *reqCtx) {
		rc.fail(http.StatusNotFound, "not_found", "No route matches "+rc.r.Method+" "+rc.r.URL.Path)
	})
	mux.HandleFunc("GET /recordings/{file}", s.serveRecording)
	mux.HandleFunc("GET /reports/{file}", s.serveReport)
	return mux
}

// api wraps an operation with, in order: the rate-limit count and headers (on every
// response), added latency, 429 (over the plan or in a burst), 404 for an Accept
// of only */* (unless allowed), 401 without a valid X-Api-Auth, injected 5xx, and
// finally the operation, run under the world lock after the world has caught up
// with the clock.
func (s *Sim) api(h func(*reqCtx)) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		q := s.limiter.take()
		q.setHeaders(rw.Header())
		s.setDate(rw.Header())
		sleep(r.Context().Done(), s.faults.latency())
		rc := &reqCtx{s: s, rw: rw, r: r, base: s.baseURL(r)}
		if q.limited {
			if s.faults.retryAfter() {
				rw.Header().Set("Retry-After", q.retryAfterSeconds())
			}
			rc.fail(http.StatusTooManyRequests, "too_many_requests", "Rate limit exceeded for this account")
			return
		}
		if !s.cfg.AllowWildcardAccept && wildcardOnly(r.Header.Values("Accept")) {
			rc.fail(http.StatusNotFound, "not_found", "Unsupported Accept header: send Accept: application/json")
			return
		}
		key, ok := s.keys[r.Header.Get("X-Api-Auth")]
		if !ok {
			rc.fail(http.StatusUnauthorized, "unauthenticated", "Invalid or missing API key in X-Api-Auth")
			return
		}
		rc.key = key
		if status, html, fail := s.faults.serverError(); fail {
			rc.serverError(status, html)
			return
		}
		rc.malformed = r.Method == http.MethodGet && s.faults.malformed()
		s.mu.Lock()
		defer s.mu.Unlock()
		rc.w = s.syncLocked()
		h(rc)
	})
}

// wildcardOnly reports whether the Accept values name nothing but */*.
func wildcardOnly(values []string) bool {
	seen := false
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			mt, _, _ := strings.Cut(strings.TrimSpace(part), ";")
			switch strings.TrimSpace(mt) {
			case "":
			case "*/*":
				seen = true
			default:
				return false
			}
		}
	}
	return seen
}

// baseURL is the scheme and host for absolute URLs.
func (s *Sim) baseURL(r *http.Request) string {
	if s.cfg.BaseURL != "" {
		return strings.TrimSuffix(s.cfg.BaseURL, "/") + s.prefix
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + s.prefix
}
