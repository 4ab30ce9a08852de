package audit

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"time"
)

// Truth is the simulator's ground truth (sim.Config.Truth), as far as the audit
// needs it.
type Truth struct {
	Calls        map[int64]*TruthCall
	Participants map[int64]*TruthParticipant
	Users        map[int64]map[string]int // user id → field → last value (fields that changed)
	Last         time.Time                // time of the last line
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

type truthLine struct {
	Time   time.Time       `json:"time"`
	Entity string          `json:"entity"`
	ID     int64           `json:"id"`
	CallID int64           `json:"call_id"`
	Change string          `json:"change"`
	Field  string          `json:"field"`
	To     json.RawMessage `json:"to"`
}

// ReadTruth parses a ground-truth NDJSON log.
func ReadTruth(r io.Reader) (*Truth, error) {
	t := &Truth{Calls: map[int64]*TruthCall{}, Participants: map[int64]*TruthParticipant{}, Users: map[int64]map[string]int{}, changes: map[string][]change{}}
	note := func(key string, at time.Time, to int) { t.changes[key] = append(t.changes[key], change{at, to}) }
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for n := 1; sc.Scan(); n++ {
		var l truthLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return nil, fmt.Errorf("truth line %d: %w", n, err)
		}
		t.Last = l.Time
		switch {
		case l.Entity == "call" && l.Change == "created":
			t.Calls[l.ID] = &TruthCall{Created: l.Time}
			note(changeKey("call", l.ID, "created"), l.Time, 0)
		case l.Entity == "call" && l.Change == "ended":
			if c := t.Calls[l.ID]; c != nil {
				c.Ended = l.Time
			}
			note(changeKey("call", l.ID, "ended"), l.Time, 0)
		case l.Entity == "metric" && l.Change == "finalized":
			if c := t.Calls[l.CallID]; c != nil {
				c.Finalized = l.Time
			}
			note(changeKey("metric", l.CallID, "finalized"), l.Time, 0)
		case l.Entity == "participant" && (l.Change == "joined" || (l.Change == "status_changed" && l.Field == "call_status")):
			var v int
			if err := json.Unmarshal(l.To, &v); err != nil {
				return nil, fmt.Errorf("truth line %d: status %s: %w", n, l.To, err)
			}
			p := t.Participants[l.ID]
			if p == nil {
				p = &TruthParticipant{CallID: l.CallID}
				t.Participants[l.ID] = p
			}
			p.Statuses = append(p.Statuses, v)
			note(changeKey("participant", l.ID, "call_status"), l.Time, v)
		case l.Entity == "user" && l.Change == "status_changed":
			var v int
			if err := json.Unmarshal(l.To, &v); err != nil {
				return nil, fmt.Errorf("truth line %d: %s %s: %w", n, l.Field, l.To, err)
			}
			if t.Users[l.ID] == nil {
				t.Users[l.ID] = map[string]int{}
			}
			t.Users[l.ID][l.Field] = v
			note(changeKey("user", l.ID, l.Field), l.Time, v)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("truth: %w", err)
	}
	return t, nil
}

// CompareTruth checks the stream against the truth, for a world that has stopped
// changing and a poller that has caught up with it: every call of the truth has
// exactly one call.created, every ended call one call.ended, every finalized metric
// one metric.finalized; every participant's published statuses are a subsequence
// of its real ones (polling may miss a brief state, never invent one) ending at its
// real final status; every user's last published status fields equal the real ones.
func (r *Report) CompareTruth(t *Truth) {
	for id, c := range t.Calls {
		if r.Created[id] != 1 {
			r.problem("truth: call %d created at %s: %d call.created published", id, c.Created.Format(time.RFC3339), r.Created[id])
		}
		if !c.Ended.IsZero() && r.Ended[id] != 1 {
			r.problem("truth: call %d ended at %s: %d call.ended published", id, c.Ended.Format(time.RFC3339), r.Ended[id])
		}
		if c.Ended.IsZero() && r.Ended[id] != 0 {
			r.problem("truth: call %d has not ended, but call.ended was published", id)
		}
		if !c.Finalized.IsZero() && r.Finalized[id] != 1 {
			r.problem("truth: call %d metric finalized at %s: %d metric.finalized published", id, c.Finalized.Format(time.RFC3339), r.Finalized[id])
		}
	}
	for id, p := range t.Participants {
		if t.Calls[p.CallID] == nil {
			continue
		}
		got := r.PartStatusSeq[id]
		if len(got) == 0 {
			r.problem("truth: participant %d of call %d: nothing published", id, p.CallID)
			continue
		}
		if got[len(got)-1] != p.Statuses[len(p.Statuses)-1] || !subsequence(got, p.Statuses) {
			r.problem("truth: participant %d of call %d: published %v, real %v", id, p.CallID, got, p.Statuses)
		}
	}
	for id, fields := range t.Users {
		last, ok := r.UserState[id]
		if !ok {
			r.problem("truth: user %d changed status, nothing published", id)
			continue
		}
		for i, f := range []string{"status", "preference", "mobile_app_preference"} {
			if v, changed := fields[f]; changed && last[i] != v {
				r.problem("truth: user %d %s is %d, last published %d", id, f, v, last[i])
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
