package sim

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestServerErrorsLeaveWorldAlone(t *testing.T) {
	s := newTestSim(t, Config{ErrorRate: 1, CallRate: -1})
	seen := map[int]bool{}
	html := 0
	for range 60 {
		r := do(t, s, "POST", "/api/v1/users", testKey, map[string]any{"email": "x@y.co", "role": "Agent"})
		seen[r.code] = true
		if r.header.Get("X-RateLimit-Total") == "" {
			t.Fatal("5xx without rate-limit headers")
		}
		if strings.HasPrefix(r.header.Get("Content-Type"), "text/html") {
			html++
		} else {
			wantError(t, r, r.code, "internal_server_error")
		}
	}
	if !seen[500] || !seen[502] || !seen[503] || len(seen) != 3 || html == 0 {
		t.Errorf("codes %v, html %d", seen, html)
	}
	if n := s.Stats().Users; n != 20 {
		t.Errorf("users %d after failed creates, want 20", n)
	}
	if r := do(t, s, "GET", "/api/v1/users", "", nil); r.code != 401 {
		t.Errorf("auth comes before faults: %d", r.code)
	}
}

func TestMalformedBodies(t *testing.T) {
	s := newTestSim(t, Config{MalformedRate: 1})
	r := do(t, s, "GET", "/api/v1/users", testKey, nil)
	if r.code != 200 || json.Valid(r.body) || len(r.body) == 0 {
		t.Errorf("malformed: %d valid=%v %q", r.code, json.Valid(r.body), r.body)
	}
	if e := do(t, s, "GET", "/api/v1/users/999", testKey, nil); !json.Valid(e.body) {
		t.Errorf("error bodies stay valid: %s", e.body)
	}
	if w := do(t, s, "POST", "/api/v1/teams", testKey, map[string]any{"name": "A"}); !json.Valid(w.body) {
		t.Errorf("writes stay valid: %s", w.body)
	}
}

func TestLatency(t *testing.T) {
	s := newTestSim(t, Config{Latency: 20 * time.Millisecond})
	begin := time.Now()
	do(t, s, "GET", "/api/v1/teams", testKey, nil)
	if d := time.Since(begin); d < 20*time.Millisecond {
		t.Errorf("request took %v, want at least 20ms", d)
	}
}
