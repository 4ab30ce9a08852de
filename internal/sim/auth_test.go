package sim

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestAuth(t *testing.T) {
	s := newTestSim(t, Config{Keys: []Key{{"agent-key", RoleAgent}, {"sup-key", RoleSupervisor}, {"adm-key", RoleAdmin}}})
	wantError(t, do(t, s, "GET", "/api/v1/users", "", nil), 401, "unauthenticated")
	wantError(t, do(t, s, "GET", "/api/v1/users", "wrong", nil), 401, "unauthenticated")
	for _, k := range []string{testKey, "agent-key", "sup-key", "adm-key"} {
		if r := do(t, s, "GET", "/api/v1/users", k, nil); r.code != 200 {
			t.Errorf("key %s: %d", k, r.code)
		}
	}
	body := map[string]any{"email": "new@example.com", "role": "Agent"}
	for _, k := range []string{"agent-key", "sup-key"} {
		wantError(t, do(t, s, "POST", "/api/v1/users", k, body), 403, "access_denied")
	}
	if r := do(t, s, "POST", "/api/v1/users", "adm-key", body); r.code != 201 {
		t.Errorf("admin create user: %d %s", r.code, r.body)
	}
	// Each key belongs to a user of its role.
	roles := map[string]bool{}
	for _, k := range s.keys {
		u := s.w.user(k.userID)
		if u.role != k.role {
			t.Errorf("key of user %d: role %s, user's %s", u.id, k.role, u.role)
		}
		roles[k.role] = true
	}
	if len(roles) != 4 {
		t.Errorf("roles bound: %v", roles)
	}
}

func TestAcceptWildcardOnly(t *testing.T) {
	for _, tc := range []struct {
		accept string
		allow  bool
		want   int
	}{
		{"*/*", false, 404},
		{"*/*", true, 200},
		{"application/json", false, 200},
		{"application/json, */*;q=0.8", false, 200},
		{"", false, 200},
	} {
		s := newTestSim(t, Config{AllowWildcardAccept: tc.allow})
		req := httptest.NewRequest("GET", "/api/v1/teams", nil)
		req.Header.Set("X-Api-Auth", testKey)
		if tc.accept != "" {
			req.Header.Set("Accept", tc.accept)
		}
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		if rec.Code != tc.want {
			t.Errorf("Accept %q allow %v: %d, want %d", tc.accept, tc.allow, rec.Code, tc.want)
		}
		if rec.Code == 404 && !strings.Contains(rec.Body.String(), `"error_type":"not_found"`) {
			t.Errorf("404 body %s", rec.Body)
		}
	}
}

func TestUnknownPathIsJSON404(t *testing.T) {
	s := newTestSim(t, Config{})
	r := do(t, s, http.MethodGet, "/api/v1/nope", testKey, nil)
	wantError(t, r, 404, "not_found")
	if r.header.Get("X-RateLimit-Total") == "" {
		t.Error("no rate-limit headers on 404")
	}
}
