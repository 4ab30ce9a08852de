package sim

import (
	"bytes"
	"fmt"
	"slices"
	"testing"
)

func TestTeams(t *testing.T) {
	var truth bytes.Buffer
	s := newTestSim(t, Config{Truth: &truth, CallRate: -1})
	l := get(t, s, "/api/v1/teams", 200).list(t)
	if len(l) != 4 {
		t.Fatalf("%d teams, want 4", len(l))
	}
	for _, k := range []string{"id", "name", "description", "users", "omni_channel"} {
		if _, ok := l[0][k]; !ok {
			t.Errorf("team lacks %s", k)
		}
	}
	r := do(t, s, "POST", "/api/v1/teams", testKey, map[string]any{"name": "Night", "description": "Late shift",
		"users": []any{map[string]any{"id": 5}, map[string]any{"id": "6"}}})
	if r.code != 201 {
		t.Fatalf("create: %d %s", r.code, r.body)
	}
	team := r.obj(t)
	id := num(t, team["id"])
	if id != 5 || team["name"] != "Night" || len(team["users"].([]any)) != 2 {
		t.Errorf("created %v", team)
	}
	userTeams := func(uid int) []int64 {
		var ids []int64
		for _, x := range get(t, s, fmt.Sprintf("/api/v1/users/%d", uid), 200).obj(t)["teams"].([]any) {
			ids = append(ids, num(t, x.(map[string]any)["id"]))
		}
		return ids
	}
	if !slices.Contains(userTeams(5), id) {
		t.Errorf("user 5 teams %v lack %d", userTeams(5), id)
	}
	path := fmt.Sprintf("/api/v1/teams/%d", id)
	up := do(t, s, "PUT", path, testKey, map[string]any{"users": []any{map[string]any{"id": 7}}, "name": "Nights"})
	if up.code != 200 {
		t.Fatalf("update: %d %s", up.code, up.body)
	}
	if got := up.obj(t); got["name"] != "Nights" || len(got["users"].([]any)) != 1 {
		t.Errorf("updated %v", got)
	}
	if slices.Contains(userTeams(5), id) || !slices.Contains(userTeams(7), id) {
		t.Errorf("membership did not move: 5 %v, 7 %v", userTeams(5), userTeams(7))
	}
	if got := get(t, s, path, 200).obj(t); got["name"] != "Nights" {
		t.Errorf("get %v", got)
	}
	wantError(t, do(t, s, "GET", "/api/v1/teams/77", testKey, nil), 404, "record_not_found")
	wantError(t, do(t, s, "PUT", "/api/v1/teams/77", testKey, map[string]any{}), 404, "record_not_found")
	wantError(t, do(t, s, "POST", "/api/v1/teams", testKey, map[string]any{"users": []any{map[string]any{"id": 999}}}),
		422, "model_validation_failed", "users[0].id")
	wantError(t, do(t, s, "POST", "/api/v1/teams", testKey, map[string]any{"users": "all"}), 422, "model_validation_failed", "users")
	wantError(t, do(t, s, "POST", "/api/v1/teams", testKey, map[string]any{"name": 3}), 422, "model_validation_failed", "name")

	_ = s.Close()
	var changes []string
	for _, l := range parseTruth(t, truth.Bytes()) {
		if l.Entity == entTeam || (l.Entity == entUser && l.Field == "teams") {
			changes = append(changes, fmt.Sprintf("%s %d %s %s %s→%s", l.Entity, l.ID, l.Change, l.Field, l.From, l.To))
		}
	}
	want := []string{
		"team 5 created  →",
		fmt.Sprintf("user 5 updated teams %s→%s", idsJSON(without(s, 5, id)), idsJSON(append(without(s, 5, id), id))),
		fmt.Sprintf("user 6 updated teams %s→%s", idsJSON(without(s, 6, id)), idsJSON(append(without(s, 6, id), id))),
		"team 5 updated name \"Night\"→\"Nights\"",
		"team 5 updated users [5,6]→[7]",
	}
	if len(changes) < 5 || !slices.Equal(changes[:4], want[:4]) || !slices.Contains(changes, want[4]) {
		t.Errorf("team truth:\n%q\nwant to start with\n%q", changes, want)
	}
}

// without is user uid's generated teams (those other than id).
func without(s *Sim, uid int, id int64) []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []int64
	for _, x := range s.w.userTeams(s.w.user(int64(uid))) {
		if x != id {
			out = append(out, x)
		}
	}
	return out
}
