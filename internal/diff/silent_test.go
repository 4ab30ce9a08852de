package diff

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/callbus/callbus/events"
)

// A new data policy re-baselines silently: a silent field's change is stored
// without an event; once the scope no longer silences it, a change is announced
// from the value stored.
func TestSilentFields(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 9, 0, 0, 0, time.UTC)
	call := func(notes string, upd time.Duration) events.Call {
		return events.Call{ID: 7, CreatedTime: t0, UpdatedTime: t0.Add(upd), CallNotes: notes,
			Participants: []events.Participant{{ID: 70, CallID: 7, CallStatus: 8, CreatedTime: t0, UpdatedTime: t0}}}
	}
	scope := Scope{Account: "acme", Epoch: "e1"}
	first, err := Call(scope, nil, call("raw notes", 0), t0)
	if err != nil {
		t.Fatal(err)
	}
	silent := scope
	silent.Silent = []string{"call_notes"}
	re, err := Call(silent, first.Snap, call("hmac-sha256:ab", time.Minute), t0.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if len(re.Events) != 0 || !re.Changed {
		t.Fatalf("re-baseline: %d events, changed %v; want none, changed", len(re.Events), re.Changed)
	}
	next, err := Call(scope, re.Snap, call("hmac-sha256:cd", 2*time.Minute), t0.Add(2*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if len(next.Events) != 1 || next.Events[0].Type != events.CallUpdated {
		t.Fatalf("after the re-baseline: %+v, want one call.updated", next.Events)
	}
	var d events.CallUpdatedData
	err = json.Unmarshal(next.Events[0].Data, &d)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Changes) != 1 || string(d.Changes[0].Previous) != `"hmac-sha256:ab"` || string(d.Changes[0].Current) != `"hmac-sha256:cd"` {
		t.Errorf("changes %+v, want the hashed previous and current", d.Changes)
	}

	u := events.User{ID: 8, Email: "raw@acme.example", Role: "Agent"}
	ur, err := User(scope, nil, u, StatusNames{}, t0)
	if err != nil {
		t.Fatal(err)
	}
	u.Email = "hmac-sha256:ef"
	ur2, err := User(Scope{Account: "acme", Epoch: "e1", Silent: []string{"email", "name", "phone"}}, ur.Snap, u, StatusNames{}, t0)
	if err != nil || len(ur2.Events) != 0 || !ur2.Changed {
		t.Fatalf("user re-baseline: %v, %d events, changed %v", err, len(ur2.Events), ur2.Changed)
	}
}
