package event

import (
	"encoding/json"
	"testing"
	"time"
)

func TestEnvelopeMessage(t *testing.T) {
	at := time.Date(2026, 11, 24, 9, 30, 0, 5, time.FixedZone("x", 3600))
	e, err := New("acme", ParticipantStatusChanged, "calls/812/participants/4431", "k/1", at, map[string]string{"current": "in_progress"})
	if err != nil {
		t.Fatal(err)
	}
	m, err := Encode(e, "callcenter", "acme")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(e)
	if m.ID != e.ID || m.Subject != "callcenter.acme.participant.status_changed" || m.Type != ParticipantStatusChanged ||
		!m.Time.Equal(at) || string(m.Data) != string(body) || m.Headers != nil {
		t.Fatalf("got %+v\nwant the envelope's id, subject, type, time and body %s", m, body)
	}

	// A message that lost its type and time gets them back from its body.
	old := Message{ID: m.ID, Subject: m.Subject, Data: m.Data}
	if err := old.RestoreHead(); err != nil || old.Type != m.Type || !old.Time.Equal(m.Time) {
		t.Fatalf("RestoreHead: %q %v %v, want %q %v", old.Type, old.Time, err, m.Type, m.Time)
	}
	bad := Message{ID: "x", Data: []byte("not json"), Type: CallCreated}
	if err := bad.RestoreHead(); err == nil || bad.Type != CallCreated {
		t.Fatalf("RestoreHead of a body that is no JSON: %v, type %q; want an error and m unchanged", err, bad.Type)
	}
}
