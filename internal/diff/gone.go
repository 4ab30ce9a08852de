package diff

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/callbus/callbus/events"
)

// UserGone diffs the disappearance of user id from the users list against its
// snapshot prev: user.deleted, with the user as last seen and deleted true, unless
// the snapshot already says deleted (announced when the flag turned). The caller
// removes the snapshot; seen stamps the event.
func UserGone(scope Scope, prev []byte, id int64, seen time.Time) (Result, error) {
	var s userSnap
	if err := json.Unmarshal(prev, &s); err != nil {
		return Result{}, fmt.Errorf("diff gone user %d: decode snapshot: %w", id, err)
	}
	em := &emitter{scope: scope, seq: s.Seq}
	if !s.Del {
		u, err := lastUser(id, s)
		if err != nil {
			return Result{}, fmt.Errorf("diff gone user %d: %w", id, err)
		}
		em.emit(events.UserDeleted, "users/"+strconv.FormatInt(id, 10), seen, &events.UserData{User: u})
	}
	return Result{Events: em.events, Changed: true}, em.err
}

// lastUser rebuilds the user as its snapshot last saw it (the fields the diff
// tracks; times it does not track are null).
func lastUser(id int64, s userSnap) (events.User, error) {
	obj := map[string]json.RawMessage{}
	for k, v := range s.F {
		obj[k] = json.RawMessage(v)
	}
	for k, v := range map[string]any{"id": id, "status": s.S[0], "preference": s.S[1], "mobile_app_preference": s.S[2], "deleted": true} {
		obj[k] = json.RawMessage(raw(v))
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return events.User{}, err
	}
	var u events.User
	if err := json.Unmarshal(b, &u); err != nil {
		return events.User{}, fmt.Errorf("rebuild from snapshot: %w", err)
	}
	u.Raw = nil
	return u, nil
}

// TeamGone diffs the disappearance of team id from the teams list against its
// snapshot prev. The catalog has no team.deleted: its documented equivalent is a
// team.updated whose changes say deleted false → true and whose members_removed
// lists every member left; the team carries its last name, description and
// omni_channel and no users. The caller removes the snapshot.
func TeamGone(scope Scope, prev []byte, id int64, seen time.Time) (Result, error) {
	var s teamSnap
	if err := json.Unmarshal(prev, &s); err != nil {
		return Result{}, fmt.Errorf("diff gone team %d: decode snapshot: %w", id, err)
	}
	t := events.Team{ID: id, Users: []events.UserRef{}}
	for k, dst := range map[string]any{"name": &t.Name, "description": &t.Description, "omni_channel": &t.OmniChannel} {
		if v, ok := s.F[k]; ok {
			_ = json.Unmarshal([]byte(v), dst) // the diff stored it from the same type
		}
	}
	em := &emitter{scope: scope, seq: s.Seq}
	em.emit(events.TeamUpdated, "teams/"+strconv.FormatInt(id, 10), seen, &events.TeamData{
		Team: t, MembersRemoved: s.M,
		Changes: []events.Change{{Field: "deleted", Previous: json.RawMessage("false"), Current: json.RawMessage("true")}},
	})
	return Result{Events: em.events, Changed: true}, em.err
}
