package poll

import (
	"encoding/json"
	"testing"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/sim"
)

// staleReplica serves, on every other read, each participant with the status it
// had before its last change but its current updated_time: the copy a lagging
// replica of a reshuffling list serves.
type staleReplica struct {
	reads int
	seen  map[int64][2]json.Number // participant → {status before, status now}
}

func (r *staleReplica) edit(c map[string]any) {
	r.reads++
	parts, _ := c["participants"].([]any)
	for _, pt := range parts {
		m, _ := pt.(map[string]any)
		id := callID(m)
		st, _ := m["call_status"].(json.Number)
		h := r.seen[id]
		if h[1] != st {
			h = [2]json.Number{h[1], st}
			r.seen[id] = h
		}
		if r.reads%2 == 0 && h[0] != "" {
			m["call_status"] = h[0]
		}
	}
}

// A replica serving stale copies with the current updated_time never makes a
// status change back: no participant.status_changed reverts the one before at
// the same time, and every call still ends once.
func TestStaleReplicaCopies(t *testing.T) {
	r := &staleReplica{seen: map[int64][2]json.Number{}}
	p, store, s := newPollerVia(t, sim.Config{Agents: 8, CallRate: 4, Backlog: 10}, everything, (&hostile{edit: r.edit}).wrap)
	stepWorld(t, p, s, 20)
	pollAll(t, p)
	last := map[string]events.Envelope{}
	ended := map[string]int{}
	for _, e := range outboxEvents(t, store) {
		if e.Type == events.CallEnded {
			ended[e.Subject]++
		}
		if e.Type != events.ParticipantStatusChanged {
			continue
		}
		if prev, ok := last[e.Subject]; ok && prev.Time.Equal(e.Time) && flips(t, prev, e) {
			t.Errorf("%s: %s then back at the same time", e.Subject, prev.Data)
		}
		last[e.Subject] = e
	}
	for sub, n := range ended {
		if n != 1 {
			t.Errorf("%s: %d call.ended", sub, n)
		}
	}
	if st := s.Stats(); len(ended) != st.CallsEnded {
		t.Errorf("%d calls ended, the world %d", len(ended), st.CallsEnded)
	}
}

// flips reports whether status event b reverts status event a.
func flips(t *testing.T, a, b events.Envelope) bool {
	t.Helper()
	var da, db events.ParticipantStatusData
	if err := json.Unmarshal(a.Data, &da); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b.Data, &db); err != nil {
		t.Fatal(err)
	}
	return da.Previous.Code == db.Current.Code
}

// A participant that stops being listed does not keep its call open: the call
// ends once the participants still listed are terminal.
func TestVanishingParticipant(t *testing.T) {
	hidden := map[int64]bool{} // participant ids no longer listed
	h := &hostile{edit: func(c map[string]any) {
		parts, _ := c["participants"].([]any)
		var kept []any
		for i, pt := range parts {
			m, _ := pt.(map[string]any)
			id := callID(m)
			st, _ := m["call_status"].(json.Number).Int64()
			if i == 1 && st == 8 && !hidden[id] {
				hidden[id] = true // the second leg, once live: listed this once, then gone
			} else if hidden[id] {
				continue
			}
			kept = append(kept, pt)
		}
		c["participants"] = kept
	}}
	p, store, s := newPollerVia(t, sim.Config{Agents: 8, CallRate: 4, Backlog: 10}, everything, h.wrap)
	stepWorld(t, p, s, 20)
	pollAll(t, p)
	got, st := outboxTypes(t, store), s.Stats()
	if len(hidden) == 0 {
		t.Fatal("no participant was hidden: the world is too quiet")
	}
	if got["call.ended"] != st.CallsEnded {
		t.Errorf("events %v; the world %+v (%d participants hidden)", got, st, len(hidden))
	}
}
