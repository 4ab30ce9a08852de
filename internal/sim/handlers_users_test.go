package sim

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestListUsersPaging(t *testing.T) {
	s := newTestSim(t, Config{Agents: 25})
	if n := len(get(t, s, "/api/v1/users", 200).list(t)); n != 10 {
		t.Errorf("default page: %d users, want 10", n)
	}
	all := get(t, s, "/api/v1/users?per_page=1000", 200).list(t)
	if len(all) != 25 {
		t.Fatalf("per_page=1000: %d users, want 25", len(all))
	}
	if num(t, all[0]["id"]) != 25 || num(t, all[24]["id"]) != 1 {
		t.Errorf("default order not newest first: %v … %v", all[0]["id"], all[24]["id"])
	}
	p3 := get(t, s, "/api/v1/users?page=3", 200).list(t)
	if len(p3) != 5 || num(t, p3[0]["id"]) != 5 {
		t.Errorf("page 3: %d users from %v", len(p3), p3[0]["id"])
	}
	if n := len(get(t, s, "/api/v1/users?page=4", 200).list(t)); n != 0 {
		t.Errorf("page 4: %d users, want 0", n)
	}
	for _, q := range []string{"per_page=1001", "per_page=0", "per_page=x", "page=0", "page=-1"} {
		wantError(t, do(t, s, "GET", "/api/v1/users?"+q, testKey, nil), 422, "model_validation_failed", strings.Split(q, "=")[0])
	}
	u := all[0]
	for _, k := range []string{"id", "name", "email", "phone", "status", "preference", "mobile_app_preference",
		"last_call_time", "last_seen_time", "confirmed", "language", "time_zone", "deleted", "role", "teams"} {
		if _, ok := u[k]; !ok {
			t.Errorf("user lacks %s: %v", k, u)
		}
	}
}

func TestOrders(t *testing.T) {
	ids := func(s *Sim) []int64 {
		var out []int64
		for _, u := range get(t, s, "/api/v1/users?per_page=1000", 200).list(t) {
			out = append(out, num(t, u["id"]))
		}
		return out
	}
	old := ids(newTestSim(t, Config{Order: OldestFirst}))
	if old[0] != 1 || old[len(old)-1] != int64(len(old)) {
		t.Errorf("oldest first: %v", old)
	}
	rs := newTestSim(t, Config{Order: RandomOrder})
	a, b := fmt.Sprint(ids(rs)), fmt.Sprint(ids(rs))
	if a == b {
		t.Errorf("random order repeated itself: %s", a)
	}
}

func TestGetUser(t *testing.T) {
	s := newTestSim(t, Config{})
	u := get(t, s, "/api/v1/users/3", 200).obj(t)
	if num(t, u["id"]) != 3 {
		t.Errorf("user %v", u["id"])
	}
	m := wantError(t, do(t, s, "GET", "/api/v1/users/4242", testKey, nil), 404, "record_not_found")
	if msg := m["message"].(string); !strings.Contains(msg, "User") || !strings.Contains(msg, "4242") {
		t.Errorf("message %q should name User and 4242", msg)
	}
	wantError(t, do(t, s, "GET", "/api/v1/users/abc", testKey, nil), 404, "record_not_found")
}

func TestCreateUser(t *testing.T) {
	s := newTestSim(t, Config{})
	r := do(t, s, "POST", "/api/v1/users", testKey, map[string]any{"email": "Zed@Example.com", "role": "Supervisor", "name": "Zed"})
	if r.code != 201 {
		t.Fatalf("create: %d %s", r.code, r.body)
	}
	u := r.obj(t)
	if u["email"] != "Zed@Example.com" || u["role"] != "Supervisor" || u["name"] != "Zed" || num(t, u["status"]) != 0 {
		t.Errorf("created %v", u)
	}
	id := num(t, u["id"])
	get(t, s, fmt.Sprintf("/api/v1/users/%d", id), 200)
	for _, tc := range []struct {
		body   any
		fields []string
	}{
		{map[string]any{"role": "Agent"}, []string{"email"}},
		{map[string]any{"email": "a@b.co"}, []string{"role"}},
		{map[string]any{}, []string{"email", "role"}},
		{map[string]any{"email": "not-an-email", "role": "Agent"}, []string{"email"}},
		{map[string]any{"email": "zed@example.com", "role": "Agent"}, []string{"email"}},
		{map[string]any{"email": "x@y.co", "role": "Boss"}, []string{"role"}},
		{map[string]any{"email": 7, "role": "Agent"}, []string{"email"}},
	} {
		wantError(t, do(t, s, "POST", "/api/v1/users", testKey, tc.body), 422, "model_validation_failed", tc.fields...)
	}
	wantError(t, do(t, s, "POST", "/api/v1/users", testKey, `{"email":`), 400, "invalid_json")
	wantError(t, do(t, s, "POST", "/api/v1/users", testKey, `[1]`), 400, "invalid_json")
}

func TestUpdateUserEntersWorld(t *testing.T) {
	s := newTestSim(t, Config{CallRate: -1})
	const id = 6
	path := fmt.Sprintf("/api/v1/users/%d", id)
	r := do(t, s, "PUT", path, testKey, map[string]any{"preference": 4}) // Lunch: offline type
	if r.code != 200 {
		t.Fatalf("update: %d %s", r.code, r.body)
	}
	if u := r.obj(t); num(t, u["preference"]) != 4 || num(t, u["status"]) != 0 {
		t.Errorf("after preference 4: %v", u)
	}
	u := do(t, s, "PUT", path, testKey, map[string]any{"preference": 6, "mobile_app_preference": 0}).obj(t)
	if num(t, u["preference"]) != 6 || num(t, u["status"]) != 1 || num(t, u["mobile_app_preference"]) != 0 {
		t.Errorf("after preference 6: %v", u)
	}
	for _, tc := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"preference": 2}, "preference"},
		{map[string]any{"preference": 3}, "preference"},
		{map[string]any{"preference": 99}, "preference"},
		{map[string]any{"preference": "1"}, "preference"},
		{map[string]any{"mobile_app_preference": 42}, "mobile_app_preference"},
		{map[string]any{"role": "Owner"}, "role"},
		{map[string]any{"email": "bad"}, "email"},
		{map[string]any{"deleted": "yes"}, "deleted"},
	} {
		wantError(t, do(t, s, "PUT", path, testKey, tc.body), 422, "model_validation_failed", tc.field)
	}
	wantError(t, do(t, s, "PUT", "/api/v1/users/999", testKey, map[string]any{}), 404, "record_not_found")

	// A deleted user is never routed and stops flipping its preference.
	u = do(t, s, "PUT", path, testKey, map[string]any{"deleted": true}).obj(t)
	if u["deleted"] != true {
		t.Fatalf("deleted: %v", u)
	}
	routable, pref := func() (bool, int) {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.w.routable(s.w.user(id)), s.w.user(id).pref
	}()
	if routable {
		t.Error("deleted user is routable")
	}
	s.Advance(24 * time.Hour)
	if got := num(t, get(t, s, path, 200).obj(t)["preference"]); got != int64(pref) {
		t.Errorf("deleted user's preference moved from %d to %d", pref, got)
	}
}

func TestListUserStatuses(t *testing.T) {
	s := newTestSim(t, Config{Order: OldestFirst})
	for _, p := range []string{"/api/v1/user-statuses?per_page=100", "/api/v1/user_statuses?per_page=100"} {
		l := get(t, s, p, 200).list(t)
		if len(l) != 8 {
			t.Fatalf("%s: %d statuses", p, len(l))
		}
		want := []string{"offline", "online", "busy", "acw"}
		for i, w := range want {
			if num(t, l[i]["id"]) != int64(i) || l[i]["status_type"] != w {
				t.Errorf("status %d: %v", i, l[i])
			}
		}
		if l[6]["status_sub_type"] != "online_phone" {
			t.Errorf("Mobile: %v", l[6])
		}
	}
}
