package diff

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/callbus/callbus/events"
)

// A forgotten field is stored again at the next observation without an event
// (a new policy's form, or the person's value still at the API); a change after
// that is announced from the value stored.
func TestForgetFields(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 9, 0, 0, 0, time.UTC)
	agent := int64(8)
	call := func(notes string, upd time.Duration) events.Call {
		return events.Call{ID: 7, CreatedTime: t0, UpdatedTime: t0.Add(upd), CallNotes: notes, AssignedAgentID: &agent,
			Participants: []events.Participant{{ID: 70, CallID: 7, CallStatus: 8, CreatedTime: t0, UpdatedTime: t0}}}
	}
	scope := Scope{Account: "acme", Epoch: "e1"}
	first, err := Call(scope, nil, call("raw notes", 0), t0)
	if err != nil {
		t.Fatal(err)
	}
	if _, changed, err := ForgetCallFields(first.Snap, []string{"call_notes"}, func(f map[string]string) bool { return f["assigned_agent_id"] == "9" }); err != nil || changed {
		t.Fatalf("another agent's call forgotten: %v %v", changed, err)
	}
	snap, changed, err := ForgetCallFields(first.Snap, []string{"call_notes"}, func(f map[string]string) bool { return f["assigned_agent_id"] == "8" })
	if err != nil || !changed {
		t.Fatalf("forget: %v %v", changed, err)
	}
	re, err := Call(scope, snap, call("hmac-sha256:ab", time.Minute), t0.Add(time.Minute))
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
	if err := json.Unmarshal(next.Events[0].Data, &d); err != nil {
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
	usnap, changed, err := ForgetUserFields(ur.Snap, []string{"email", "name", "phone"})
	if err != nil || !changed || string(usnap) == string(ur.Snap) {
		t.Fatalf("forget user: %v %v", changed, err)
	}
	u.Email = "hmac-sha256:ef"
	ur2, err := User(scope, usnap, u, StatusNames{}, t0)
	if err != nil || len(ur2.Events) != 0 || !ur2.Changed {
		t.Fatalf("user re-baseline: %v, %d events, changed %v", err, len(ur2.Events), ur2.Changed)
	}
}
