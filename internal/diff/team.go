package diff

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/callbus/callbus/events"
)

type teamSnap struct {
	Seq int64             `json:"q"`
	M   []int64           `json:"m,omitempty"` // member ids, sorted
	F   map[string]string `json:"f,omitempty"`
}

// Team diffs an observation t of a team against its snapshot prev (nil when never
// seen), stamping events with seen (teams carry no updated_time). Events:
// team.created, team.updated with the members added and removed and the changed
// name, description or omni_channel.
func Team(scope Scope, prev []byte, t events.Team, seen time.Time) (Result, error) {
	var s teamSnap
	if prev != nil {
		if err := json.Unmarshal(prev, &s); err != nil {
			return Result{}, fmt.Errorf("diff team %d: decode snapshot: %w", t.ID, err)
		}
	}
	if s.F == nil {
		s.F = map[string]string{}
	}
	creating := prev == nil
	members := make([]int64, 0, len(t.Users))
	for _, u := range t.Users {
		members = append(members, u.ID)
	}
	slices.Sort(members)
	members = slices.Compact(members)
	entity := "teams/" + strconv.FormatInt(t.ID, 10)
	em := &emitter{scope: scope, seq: s.Seq}
	ch := compare(s.F, []field{
		known("name", t.Name),
		known("description", t.Description),
		known("omni_channel", t.OmniChannel),
	}, creating)
	added, removed := setDiff(s.M, members)
	switch {
	case creating:
		em.emit(events.TeamCreated, entity, seen, &events.TeamData{Team: t})
	case len(ch) > 0 || len(added) > 0 || len(removed) > 0:
		em.emit(events.TeamUpdated, entity, seen, &events.TeamData{Team: t, MembersAdded: added, MembersRemoved: removed, Changes: ch})
	}
	s.M, s.Seq = members, em.seq
	return result(em, s, prev, "team", t.ID)
}

// setDiff returns what is in b and not in a, and what is in a and not in b; both
// inputs sorted.
func setDiff(a, b []int64) (added, removed []int64) {
	for _, x := range b {
		if _, ok := slices.BinarySearch(a, x); !ok {
			added = append(added, x)
		}
	}
	for _, x := range a {
		if _, ok := slices.BinarySearch(b, x); !ok {
			removed = append(removed, x)
		}
	}
	return added, removed
}
