package diff

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/callbus/callbus/internal/callcenter"
	"github.com/callbus/callbus/internal/event"
)

// StatusNames resolves user status values to names from the account's user
// statuses.
type StatusNames struct {
	byID   map[int64]string
	byType map[string]string // status_type → name of the default status of that type
}

// NewStatusNames indexes the list of user statuses. A user's `status` (0 offline,
// 1 online, 2 busy, 3 after-call work) is named after the status of the matching
// status_type (the lowest id wins, which is the default one); preferences are
// status ids and are named after that status.
func NewStatusNames(list []callcenter.UserStatus) StatusNames {
	sorted := slices.Clone(list)
	slices.SortFunc(sorted, func(a, b callcenter.UserStatus) int { return int(a.ID - b.ID) })
	n := StatusNames{byID: map[int64]string{}, byType: map[string]string{}}
	for _, s := range sorted {
		n.byID[s.ID] = s.Name
		if _, ok := n.byType[s.StatusType]; !ok {
			n.byType[s.StatusType] = s.Name
		}
	}
	return n
}

var statusTypes = [...]string{"offline", "online", "busy", "acw"}

// Status names a user's status value; "" when unknown.
func (n StatusNames) Status(v int) string {
	if v < 0 || v >= len(statusTypes) {
		return ""
	}
	if name, ok := n.byType[statusTypes[v]]; ok {
		return name
	}
	return statusTypes[v]
}

// Preference names a status id; "" when the id is not in the list.
func (n StatusNames) Preference(id int) string { return n.byID[int64(id)] }

func (n StatusNames) state(s [3]int) event.UserState {
	return event.UserState{
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
	Events  []event.Envelope
	Snap    []byte
	Changed bool
}

// User diffs an observation u of a user against its snapshot prev (nil when never
// seen). Users carry no updated_time, so events are stamped with seen, the time of
// the response that carried u. Events: user.created (first sight), user.updated
// (role, email, name, phone, teams, language, time zone, confirmed; also un-deleted),
// user.deleted (deleted turns true), user.status_changed (status, preference or
// mobile_app_preference).
func User(scope Scope, prev []byte, u callcenter.User, names StatusNames, seen time.Time) (Result, error) {
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
		em.emit(event.UserCreated, entity, seen, &event.UserData{User: u})
	case u.Deleted && !s.Del:
		em.emit(event.UserDeleted, entity, seen, &event.UserData{User: u, Changes: ch})
	case !u.Deleted && s.Del:
		ch = append(ch, event.Change{Field: "deleted", Previous: json.RawMessage("true"), Current: json.RawMessage("false")})
		fallthrough
	case len(ch) > 0:
		em.emit(event.UserUpdated, entity, seen, &event.UserData{User: u, Changes: ch})
	}
	if !creating && cur != s.S {
		var changed []string
		for i, name := range []string{"status", "preference", "mobile_app_preference"} {
			if cur[i] != s.S[i] {
				changed = append(changed, name)
			}
		}
		em.emit(event.UserStatusChanged, entity, seen, &event.UserStatusData{
			User: u, Previous: names.state(s.S), Current: names.state(cur), Changed: changed,
		})
	}
	s.S, s.Del, s.Seq = cur, u.Deleted, em.seq
	return result(em, s, prev, "user", u.ID)
}

func userFields(u callcenter.User) []field {
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
