package sim

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// listTeams: GET /teams → 200, array of teams.
func (s *Sim) listTeams(rc *reqCtx) { sendList(rc, rc.w.teams, (*view).team) }

// getTeam: GET /teams/{team_id} → 200 team, 404.
func (s *Sim) getTeam(rc *reqCtx) {
	id, ok := rc.pathID("team_id", "Team")
	if !ok {
		return
	}
	t := rc.w.team(id)
	if t == nil {
		rc.notFound("Team", id)
		return
	}
	rc.sendTeam(http.StatusOK, t)
}

func (rc *reqCtx) sendTeam(status int, t *team) {
	var e enc
	rc.view().team(&e, t)
	rc.send(status, e.bytes())
}

// teamBody is a validated create/update-team body.
type teamBody struct {
	name, desc       string
	hasName, hasDesc bool
	users            []int64
	hasUsers         bool
	omni, hasOmni    bool
}

// readTeam validates a team body: name and description strings, users an array of
// {id} naming existing users (ids as numbers or numeric strings), omni_channel a
// boolean. On error it writes 400/422 and returns false.
func (rc *reqCtx) readTeam() (teamBody, bool) {
	var b teamBody
	m, ok := rc.object()
	if !ok {
		return b, false
	}
	f := &fields{m: m}
	b.name, b.hasName = f.str("name")
	b.desc, b.hasDesc = f.str("description")
	b.omni, b.hasOmni = f.bool("omni_channel")
	if raw, ok := m["users"]; ok && string(raw) != "null" {
		b.hasUsers = true
		var entries []map[string]json.RawMessage
		if err := json.Unmarshal(raw, &entries); err != nil {
			f.bad("users", "must be an array of objects with an id")
		}
		for i, ent := range entries {
			id, ok := flexID(ent["id"])
			switch {
			case !ok:
				f.bad(fmt.Sprintf("users[%d].id", i), "must be a user id")
			case rc.w.user(id) == nil:
				f.bad(fmt.Sprintf("users[%d].id", i), fmt.Sprintf("user %d does not exist", id))
			default:
				b.users = append(b.users, id)
			}
		}
	}
	if len(f.errs) > 0 {
		rc.invalid(f.errs)
		return b, false
	}
	return b, true
}

// createTeam: POST /teams → 201 team, 403, 422. No field is required.
func (s *Sim) createTeam(rc *reqCtx) {
	if !rc.requireAdmin("Creating teams") {
		return
	}
	b, ok := rc.readTeam()
	if !ok {
		return
	}
	rc.sendTeam(http.StatusCreated, rc.w.createTeam(b.name, b.desc, b.users, b.omni))
}

// updateTeam: PUT /teams/{team_id} → 200 team, 403, 404, 422. users, when given,
// replaces the membership (routing follows at once).
func (s *Sim) updateTeam(rc *reqCtx) {
	if !rc.requireAdmin("Updating teams") {
		return
	}
	id, ok := rc.pathID("team_id", "Team")
	if !ok {
		return
	}
	w := rc.w
	t := w.team(id)
	if t == nil {
		rc.notFound("Team", id)
		return
	}
	b, ok := rc.readTeam()
	if !ok {
		return
	}
	if b.hasName && b.name != t.name {
		w.truth.write(w.now, entTeam, t.id, 0, chUpdated, "name", t.name, b.name)
		t.name = b.name
	}
	if b.hasDesc && b.desc != t.desc {
		w.truth.write(w.now, entTeam, t.id, 0, chUpdated, "description", t.desc, b.desc)
		t.desc = b.desc
	}
	if b.hasOmni && b.omni != t.omni {
		w.truth.write(w.now, entTeam, t.id, 0, chUpdated, "omni_channel", t.omni, b.omni)
		t.omni = b.omni
	}
	if b.hasUsers {
		w.setMembers(t, b.users)
	}
	rc.sendTeam(http.StatusOK, t)
}
