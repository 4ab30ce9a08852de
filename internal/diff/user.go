package diff

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/callbus/callbus/events"
)

// StatusNames resolves user status values to names from the account's user
// statuses. The zero value names nothing; Add indexes one status at a time, so
// diff needs no type of the API client (poll reads the statuses and adds them).
type StatusNames struct {
	byID   map[int64]string
	byType map[string]typeDefault // status_type → the default status of that type
}

// typeDefault is the status that names a status_type: the lowest id seen of it.
type typeDefault struct {
	id   int64
	name string
}

// Add indexes one of the account's user statuses. A user's `status` (0 offline,
// 1 online, 2 busy, 3 after-call work) is named after the status of the matching
// status_type (the lowest id wins, which is the default one, whatever the order
// of the list); preferences are status ids and are named after that status.
func (n *StatusNames) Add(id int64, statusType, name string) {
	if n.byID == nil {
		n.byID, n.byType = map[int64]string{}, map[string]typeDefault{}
	}
	if _, ok := n.byID[id]; !ok {
		n.byID[id] = name
	}
	if d, ok := n.byType[statusType]; !ok || id < d.id {
		n.byType[statusType] = typeDefault{id, name}
	}
}

var statusTypes = [...]string{"offline", "online", "busy", "acw"}

// Status names a user's status value; "" when unknown.
func (n StatusNames) Status(v int) string {
	if v < 0 || v >= len(statusTypes) {
		return ""
	}
	if d, ok := n.byType[statusTypes[v]]; ok {
		return d.name
	}
	return statusTypes[v]
}

// Preference names a status id; "" when the id is not in the list.
func (n StatusNames) Preference(id int) string { return n.byID[int64(id)] }

func (n StatusNames) state(s [3]int) events.UserState {
	return events.UserState{
		Status: s[0], StatusName: n.Status(s[0]),
		Preference: s[1], PreferenceName: n.Preference(s[1]),
		MobileAppPreference: s[2], MobileAppPreferenceName: n.Preference(s[2]),
	}
}

type userSnap struct {
	Seq int64             `json:"q"`
	S   [3]int            `json:"s"` // status, preference, mobile_app_preference
	Del bool              `json:"d,omitempty"`
	F   map[string]string `json:"f,omitempty"`
}

// Result is the outcome of one user or team observation.
type Result struct {
	Events  []events.Envelope
	Snap    []byte
	Changed bool
}

// User diffs an observation u of a user against its snapshot prev (nil when never
// seen). Users carry no updated_time, so events are stamped with seen, the time of
// the response that carried u. Events: user.created (first sight), user.updated
// (role, email, name, phone, teams, language, time zone, confirmed; also un-deleted),
// user.deleted (deleted turns true), user.status_changed (status, preference or
// mobile_app_preference).
func User(scope Scope, prev []byte, u events.User, names StatusNames, seen time.Time) (Result, error) {
	var s userSnap
	if prev != nil {
		if err := json.Unmarshal(prev, &s); err != nil {
			return Result{}, fmt.Errorf("diff user %d: decode snapshot: %w", u.ID, err)
		}
	}
	if s.F == nil {
		s.F = map[string]string{}
	}
	creating := prev == nil
	entity := "users/" + strconv.FormatInt(u.ID, 10)
	em := &emitter{scope: scope, seq: s.Seq}
	cur := [3]int{u.Status, u.Preference, u.MobileAppPreference}
	ch := compare(s.F, userFields(u), creating)
	switch {
	case creating:
		em.emit(events.UserCreated, entity, seen, &events.UserData{User: u})
	case u.Deleted && !s.Del:
		em.emit(events.UserDeleted, entity, seen, &events.UserData{User: u, Changes: ch})
	case !u.Deleted && s.Del:
		ch = append(ch, events.Change{Field: "deleted", Previous: json.RawMessage("true"), Current: json.RawMessage("false")})
		fallthrough
	case len(ch) > 0:
		em.emit(events.UserUpdated, entity, seen, &events.UserData{User: u, Changes: ch})
	}
	if !creating && cur != s.S {
		var changed []string
		for i, name := range []string{"status", "preference", "mobile_app_preference"} {
			if cur[i] != s.S[i] {
				changed = append(changed, name)
			}
		}
		em.emit(events.UserStatusChanged, entity, seen, &events.UserStatusData{
			User: u, Previous: names.state(s.S), Current: names.state(cur), Changed: changed,
		})
	}
	s.S, s.Del, s.Seq = cur, u.Deleted, em.seq
	return result(em, s, prev, "user", u.ID)
}

func userFields(u events.User) []field {
	teams := make([]int64, 0, len(u.Teams))
	for _, t := range u.Teams {
		teams = append(teams, t.ID)
	}
	slices.Sort(teams)
	return []field{
		known("name", u.Name),
		known("email", u.Email),
		known("phone", u.Phone),
		known("role", u.Role),
		known("teams", teams),
		known("language", u.Language),
		known("time_zone", u.TimeZone),
		known("confirmed", u.Confirmed),
	}
}

// result encodes the next snapshot of a user or team.
func result(em *emitter, snap any, prev []byte, kind string, id int64) (Result, error) {
	if em.err != nil {
		return Result{}, fmt.Errorf("diff %s %d: %w", kind, id, em.err)
	}
	next, err := json.Marshal(snap)
	if err != nil {
		return Result{}, fmt.Errorf("diff %s %d: encode snapshot: %w", kind, id, err)
	}
	return Result{Events: em.events, Snap: next, Changed: string(next) != string(prev)}, nil
}
