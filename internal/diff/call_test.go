package diff

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/callbus/callbus/events"
)

var t0 = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

func at(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }

func ptr[T any](v T) *T { return &v }

func part(id int64, status int, upd int) events.Participant {
	return events.Participant{ID: id, CallID: 1, CallStatus: status, CreatedTime: at(0), UpdatedTime: at(upd)}
}

func call(upd int, parts ...events.Participant) events.Call {
	return events.Call{
		ID: 1, Direction: "incoming", CreatedTime: at(0), UpdatedTime: at(upd),
		AssignedAgentID: ptr(int64(7)), AssignedAgentName: ptr("Ann"), Participants: parts,
	}
}

func types(evs []events.Envelope) []events.Type {
	var out []events.Type
	for _, e := range evs {
		out = append(out, e.Type)
	}
	return out
}

// apply runs the call diff over observations in order, returning every event.
func apply(t *testing.T, obs ...events.Call) ([]events.Envelope, []byte, CallState) {
	t.Helper()
	var snap []byte
	var all []events.Envelope
	var st CallState
	for _, c := range obs {
		r, err := Call(Scope{Account: "acme"}, snap, c, orTime(c.UpdatedTime, at(900)).Add(time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if !r.Changed && len(r.Events) > 0 {
			t.Fatalf("events without a snapshot change: %v", types(r.Events))
		}
		all = append(all, r.Events...)
		snap, st = r.Snap, r.State
	}
	return all, snap, st
}

func TestCallDiff(t *testing.T) {
	withNotes := call(20, part(10, 8, 5))
	withNotes.CallNotes = "callback tomorrow"
	earlier := call(20, part(10, 8, 5))
	earlier.AssignedAgentName = nil // the earlier form has no name fields
	earlier.IntegratedResources = nil
	recorded := call(30, part(10, 1, 30))
	recorded.Recording = &events.Recording{ID: 99, URL: "u", Duration: 30}
	tests := []struct {
		name string
		obs  []events.Call
		want []events.Type
	}{
		{"first sight", []events.Call{call(0, part(10, 13, 0))},
			[]events.Type{events.CallCreated, events.ParticipantJoined}},
		{"no change no event", []events.Call{call(0, part(10, 13, 0)), call(0, part(10, 13, 0)), call(1, part(10, 13, 0))},
			[]events.Type{events.CallCreated, events.ParticipantJoined}},
		{"status change", []events.Call{call(0, part(10, 13, 0)), call(5, part(10, 8, 5))},
			[]events.Type{events.CallCreated, events.ParticipantJoined, events.ParticipantStatusChanged}},
		{"participant joins later", []events.Call{call(0, part(10, 8, 0)), call(5, part(10, 8, 0), part(11, 13, 5))},
			[]events.Type{events.CallCreated, events.ParticipantJoined, events.ParticipantJoined}},
		{"ended once", []events.Call{call(0, part(10, 8, 0)), call(9, part(10, 1, 9)), call(12, part(10, 1, 9))},
			[]events.Type{events.CallCreated, events.ParticipantJoined, events.ParticipantStatusChanged, events.CallEnded}},
		{"first seen already ended", []events.Call{call(9, part(10, 17, 9))},
			[]events.Type{events.CallCreated, events.ParticipantJoined, events.CallEnded}},
		{"not ended while one leg is open", []events.Call{call(9, part(10, 1, 9), part(11, 12, 9))},
			[]events.Type{events.CallCreated, events.ParticipantJoined, events.ParticipantJoined}},
		{"tracked field change", []events.Call{call(0, part(10, 8, 5)), withNotes},
			[]events.Type{events.CallCreated, events.ParticipantJoined, events.CallUpdated}},
		{"earlier form is no change", []events.Call{call(0, part(10, 8, 5)), earlier},
			[]events.Type{events.CallCreated, events.ParticipantJoined}},
		{"stale observation ignored", []events.Call{call(0, part(10, 13, 0)), call(9, part(10, 1, 9)), call(5, part(10, 8, 5))},
			[]events.Type{events.CallCreated, events.ParticipantJoined, events.ParticipantStatusChanged, events.CallEnded}},
		{"recording attached with end", []events.Call{call(0, part(10, 8, 5)), recorded},
			[]events.Type{events.CallCreated, events.ParticipantJoined, events.CallUpdated, events.ParticipantStatusChanged, events.CallEnded}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			evs, _, _ := apply(t, tc.obs...)
			if got := types(evs); !slices.Equal(got, tc.want) {
				t.Fatalf("got  %v\nwant %v", got, tc.want)
			}
			for _, e := range evs {
				if err := e.Validate(); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

func TestCallChainAndState(t *testing.T) {
	evs, _, st := apply(t,
		call(0, part(10, 13, 0)),
		call(3, part(10, 8, 3)),
		call(4, part(10, 12, 4)),
		call(6, part(10, 8, 6)),
		call(9, part(10, 1, 9)),
	)
	prev := 13
	var n int
	for _, e := range evs {
		if e.Type != events.ParticipantStatusChanged {
			continue
		}
		var d events.ParticipantStatusData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			t.Fatal(err)
		}
		if d.Previous.Code != prev {
			t.Fatalf("chain broken: previous %d, want %d", d.Previous.Code, prev)
		}
		if d.Current.Label == "" || e.Subject != "calls/1/participants/10" {
			t.Fatalf("label %q subject %q", d.Current.Label, e.Subject)
		}
		prev = d.Current.Code
		n++
	}
	if n != 4 || prev != 1 {
		t.Fatalf("got %d status events ending at %d, want 4 ending at 1", n, prev)
	}
	if !st.Ended || !st.EndedAt.Equal(at(9)) {
		t.Fatalf("state %+v, want ended at %s", st, at(9))
	}
}

func TestCallChangesCarryPreviousAndCurrent(t *testing.T) {
	moved := call(5, part(10, 8, 5))
	moved.AssignedAgentID = ptr(int64(8))
	evs, _, _ := apply(t, call(0, part(10, 8, 0)), moved)
	var d events.CallUpdatedData
	if err := json.Unmarshal(evs[len(evs)-1].Data, &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Changes) != 1 || d.Changes[0].Field != "assigned_agent_id" ||
		string(d.Changes[0].Previous) != "7" || string(d.Changes[0].Current) != "8" {
		t.Fatalf("changes %+v", d.Changes)
	}
}

func TestCallIDsDeterministic(t *testing.T) {
	obs := []events.Call{call(0, part(10, 13, 0)), call(3, part(10, 8, 3)), call(3, part(10, 8, 3)), call(9, part(10, 1, 9))}
	a, _, _ := apply(t, obs...)
	b, _, _ := apply(t, obs...)
	seen := map[string]bool{}
	for i := range a {
		if a[i].ID != b[i].ID {
			t.Fatalf("event %d: ids differ between runs", i)
		}
		if seen[a[i].ID] {
			t.Fatalf("duplicate id %s", a[i].ID)
		}
		seen[a[i].ID] = true
	}
	// Returning to an earlier status is a new event with a new id.
	c, _, _ := apply(t, call(0, part(10, 8, 0)), call(1, part(10, 12, 1)), call(2, part(10, 8, 2)), call(3, part(10, 12, 3)))
	ids := map[string]bool{}
	for _, e := range c {
		if ids[e.ID] {
			t.Fatalf("repeated state reused id %s", e.ID)
		}
		ids[e.ID] = true
	}
}

func TestCallBadSnapshot(t *testing.T) {
	if _, err := Call(Scope{Account: "acme"}, []byte("{not json"), call(0), at(1)); err == nil {
		t.Fatal("want error for a corrupt snapshot")
	}
}
