package diff

import (
	"testing"

	"github.com/callbus/callbus/events"
)

// A participant event replayed onto the call snapshot leaves nothing to announce
// when the poller later reads the call in that state; a change past it is still
// announced, chained to the replayed status.
func TestApplyParticipant(t *testing.T) {
	calls := schemaCalls()[0]
	ringing, talking := calls[0], calls[1]
	r, err := Call(Scope{Account: "acme"}, nil, ringing, schemaAt(1))
	if err != nil {
		t.Fatal(err)
	}
	snap := r.Snap
	for _, p := range talking.Participants { // what the stream announced
		if snap, err = ApplyParticipant(snap, p); err != nil {
			t.Fatal(err)
		}
	}
	again, err := Call(Scope{Account: "acme"}, snap, talking, schemaAt(6))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range again.Events {
		if e.Type == events.ParticipantStatusChanged || e.Type == events.ParticipantJoined {
			t.Errorf("replayed participant announced again: %s %s", e.Type, e.Subject)
		}
	}
	ended, err := Call(Scope{Account: "acme"}, snap, calls[2], schemaAt(31))
	if err != nil {
		t.Fatal(err)
	}
	changed := 0
	for _, e := range ended.Events {
		if e.Type == events.ParticipantStatusChanged {
			changed++
		}
	}
	if changed != 2 {
		t.Errorf("the end after the replay: %d status changes, want 2", changed)
	}
	if got, err := ApplyParticipant(nil, talking.Participants[0]); got != nil || err != nil {
		t.Errorf("no call snapshot: %s %v, want nil", got, err)
	}
}
