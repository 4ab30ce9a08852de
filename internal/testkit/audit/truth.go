package audit

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"time"

	"github.com/callbus/callbus/internal/sim"
)

// Truth is the simulator's ground truth (sim.Config.Truth), as far as the audit
// needs it.
type Truth struct {
	Calls        map[int64]*TruthCall
	Participants map[int64]*TruthParticipant
	Users        map[int64]map[string]int // user id → field → last value (fields that changed)
	Last         time.Time                // time of the last line
	// Hidden are participants the API stopped listing (Hide): only what it showed
	// of them can be published, so their statuses need not reach the real final
	// one, and nothing published is no problem.
	Hidden map[int64]bool
	// changes indexes every change by entity, id and field ("participant:7:call_status",
	// "call:3:ended"), in time order, for Delays.
	changes map[string][]change
}

type change struct {
	at time.Time
	to int
}

func changeKey(entity string, id int64, field string) string {
	return fmt.Sprintf("%s:%d:%s", entity, id, field)
}

// TruthCall is one call's life.
type TruthCall struct {
	Created, Ended, Finalized time.Time
}

// TruthParticipant is one participant's call_status history (first: on joining).
type TruthParticipant struct {
	CallID   int64
	Statuses []int
}

// ReadTruth parses a ground-truth log (sim.ReadTruth) into what the audit needs.
func ReadTruth(r io.Reader) (*Truth, error) {
	t := &Truth{Calls: map[int64]*TruthCall{}, Participants: map[int64]*TruthParticipant{}, Users: map[int64]map[string]int{}, changes: map[string][]change{}}
	err := sim.ReadTruth(r, func(l sim.TruthLine) error {
		t.Last = l.Time
		return t.add(l)
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// add records one truth line.
func (t *Truth) add(l sim.TruthLine) error {
	note := func(key string, to int) { t.changes[key] = append(t.changes[key], change{l.Time, to}) }
	switch {
	case l.Entity == sim.EntityCall && l.Change == sim.ChangeCreated:
		t.Calls[l.ID] = &TruthCall{Created: l.Time}
		note(changeKey("call", l.ID, "created"), 0)
	case l.Entity == sim.EntityCall && l.Change == sim.ChangeEnded:
		if c := t.Calls[l.ID]; c != nil {
			c.Ended = l.Time
		}
		note(changeKey("call", l.ID, "ended"), 0)
	case l.Entity == sim.EntityMetric && l.Change == sim.ChangeFinalized:
		if c := t.Calls[l.CallID]; c != nil {
			c.Finalized = l.Time
		}
		note(changeKey("metric", l.CallID, "finalized"), 0)
	case l.Entity == sim.EntityParticipant && (l.Change == sim.ChangeJoined || (l.Change == sim.ChangeStatusChanged && l.Field == "call_status")):
		var v int
		if err := json.Unmarshal(l.To, &v); err != nil {
			return fmt.Errorf("status %s: %w", l.To, err)
		}
		p := t.Participants[l.ID]
		if p == nil {
			p = &TruthParticipant{CallID: l.CallID}
			t.Participants[l.ID] = p
		}
		p.Statuses = append(p.Statuses, v)
		note(changeKey("participant", l.ID, "call_status"), v)
	case l.Entity == sim.EntityUser && l.Change == sim.ChangeStatusChanged:
		var v int
		if err := json.Unmarshal(l.To, &v); err != nil {
			return fmt.Errorf("%s %s: %w", l.Field, l.To, err)
		}
		if t.Users[l.ID] == nil {
			t.Users[l.ID] = map[string]int{}
		}
		t.Users[l.ID][l.Field] = v
		note(changeKey("user", l.ID, l.Field), v)
	}
	return nil
}

// CompareTruth checks the stream against the truth, for a world that has stopped
// changing and a poller that has caught up with it: every call of the truth has
// one call.created (at least one, for AtLeastOnce delivery), every ended call one
// call.ended and no other call any, every finalized metric one metric.finalized.
// Polling may miss a brief state, never invent one or reorder two: every
// participant's published statuses are a subsequence of its real ones, ending at
// its real final status (a participant with nothing published is a problem), and
// the values published for each user status field a subsequence of its real
// changes, ending at its real value.
func (r *Report) CompareTruth(t *Truth) {
	want := func(n int) bool { return n == 1 || (n > 1 && r.Delivery == AtLeastOnce) }
	for _, id := range slices.Sorted(maps.Keys(t.Calls)) {
		c := t.Calls[id]
		if !want(r.Created[id]) {
			r.problem("truth: call %d created at %s: %d call.created published", id, c.Created.Format(time.RFC3339), r.Created[id])
		}
		if !c.Ended.IsZero() && !want(r.Ended[id]) {
			r.problem("truth: call %d ended at %s: %d call.ended published", id, c.Ended.Format(time.RFC3339), r.Ended[id])
		}
		if c.Ended.IsZero() && r.Ended[id] != 0 {
			r.problem("truth: call %d has not ended, but call.ended was published", id)
		}
		if !c.Finalized.IsZero() && !want(r.Finalized[id]) {
			r.problem("truth: call %d metric finalized at %s: %d metric.finalized published", id, c.Finalized.Format(time.RFC3339), r.Finalized[id])
		}
	}
	r.compareParticipants(t)
	r.compareUsers(t)
}

// CompareCounts checks how many calls the stream announced, ended and finalized
// against the world's counts (sim.Stats Calls, CallsEnded, MetricsFinalized),
// which cover what the truth does not record (the simulator's backlog).
func (r *Report) CompareCounts(calls, ended, finalized int) {
	if len(r.Created) != calls || len(r.Ended) != ended || len(r.Finalized) != finalized {
		r.problem("stream has %d calls created, %d ended, %d metrics finalized; the world %d, %d, %d",
			len(r.Created), len(r.Ended), len(r.Finalized), calls, ended, finalized)
	}
}

// Hide marks participants the API stopped listing before their last status (a
// simulator's hostile profile): CompareTruth then only checks that what was
// published of them is a subsequence of their real statuses.
func (t *Truth) Hide(ids ...int64) {
	if t.Hidden == nil {
		t.Hidden = map[int64]bool{}
	}
	for _, id := range ids {
		t.Hidden[id] = true
	}
}

func (r *Report) compareParticipants(t *Truth) {
	for _, id := range slices.Sorted(maps.Keys(t.Participants)) {
		p := t.Participants[id]
		if t.Calls[p.CallID] == nil {
			continue
		}
		// A participant announced again after a loss repeats its status at joining.
		got := slices.Compact(slices.Clone(r.PartStatusSeq[id]))
		if t.Hidden[id] {
			if !subsequence(got, p.Statuses) {
				r.problem("truth: hidden participant %d of call %d: published %v, real %v", id, p.CallID, got, p.Statuses)
			}
			continue
		}
		if len(got) == 0 {
			r.problem("truth: participant %d of call %d: nothing published", id, p.CallID)
			continue
		}
		if got[len(got)-1] != p.Statuses[len(p.Statuses)-1] || !subsequence(got, p.Statuses) {
			r.problem("truth: participant %d of call %d: published %v, real %v", id, p.CallID, got, p.Statuses)
		}
	}
}

func (r *Report) compareUsers(t *Truth) {
	for _, id := range slices.Sorted(maps.Keys(t.Users)) {
		fields := t.Users[id]
		last, ok := r.UserState[id]
		if !ok {
			r.problem("truth: user %d changed status, nothing published", id)
			continue
		}
		for i, f := range userFields {
			v, changed := fields[f]
			if !changed {
				continue
			}
			if last[i] != v {
				r.problem("truth: user %d %s is %d, last published %d", id, f, v, last[i])
			}
			var real []int
			for _, c := range t.changes[changeKey("user", id, f)] {
				real = append(real, c.to)
			}
			if got := r.UserFieldSeq[userFieldKey(id, f)]; !subsequence(got, real) {
				r.problem("truth: user %d %s: published changes %v, real %v", id, f, got, real)
			}
		}
	}
}

// subsequence reports whether a appears in b in order (not necessarily adjacent),
// where consecutive repeats in b collapse.
func subsequence(a, b []int) bool {
	b = slices.Compact(slices.Clone(b))
	i := 0
	for _, v := range b {
		if i < len(a) && a[i] == v {
			i++
		}
	}
	return i == len(a)
}
