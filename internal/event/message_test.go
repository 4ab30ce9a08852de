package event

import (
	"encoding/json"
	"github.com/callbus/callbus/events"
	"testing"
	"time"
)

func TestEnvelopeMessage(t *testing.T) {
	at := time.Date(2026, 11, 24, 9, 30, 0, 5, time.FixedZone("x", 3600))
	e, err := New("acme", events.ParticipantStatusChanged, "calls/812/participants/4431", "k/1", at, map[string]string{"current": "in_progress"})
	if err != nil {
		t.Fatal(err)
	}
	m, err := Encode(e, "callcenter", "acme")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(e)
	if m.ID != e.ID || m.Subject != "callcenter.acme.participant.status_changed" || m.Type != events.ParticipantStatusChanged ||
		!m.Time.Equal(at) || string(m.Data) != string(body) || m.Headers != nil {
		t.Fatalf("got %+v\nwant the envelope's id, subject, type, time and body %s", m, body)
	}

	// A message that lost its type and time gets them back from its body.
	old := Message{ID: m.ID, Subject: m.Subject, Data: m.Data}
	if err := old.RestoreHead(); err != nil || old.Type != m.Type || !old.Time.Equal(m.Time) {
		t.Fatalf("RestoreHead: %q %v %v, want %q %v", old.Type, old.Time, err, m.Type, m.Time)
	}
	bad := Message{ID: "x", Data: []byte("not json"), Type: events.CallCreated}
	if err := bad.RestoreHead(); err == nil || bad.Type != events.CallCreated {
		t.Fatalf("RestoreHead of a body that is no JSON: %v, type %q; want an error and m unchanged", err, bad.Type)
	}
}

// Encode writes what json.Marshal writes for the envelope, whatever its
// attributes hold, as long as its data is compact JSON (as New makes it).
func TestEncodeIsMarshal(t *testing.T) {
	at := time.Date(2026, 11, 24, 9, 30, 0, 123456789, time.FixedZone("x", -5*3600))
	base, err := New("acme", events.CallCreated, "calls/812", "k", at, map[string]any{"id": 812, "note": "<b>&</b>\u2028"})
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]func(e *events.Envelope){
		"as made":     func(*events.Envelope) {},
		"history":     func(e *events.Envelope) { e.History = true },
		"no data":     func(e *events.Envelope) { e.Data = nil },
		"zero time":   func(e *events.Envelope) { e.Time = time.Time{} },
		"odd subject": func(e *events.Envelope) { e.Subject = "calls/<1>&\"q\"\n\u2028é\xff" },
		"odd type":    func(e *events.Envelope) { e.Type = "t\x00\t" },
		"raw data":    func(e *events.Envelope) { e.Data = json.RawMessage(`{"a":[1,2,{"b":null}]}`) },
	}
	for name, edit := range cases {
		e := base
		edit(&e)
		m, err := Encode(e, "callcenter", "acme")
		want, werr := json.Marshal(e)
		if err != nil || werr != nil || string(m.Data) != string(want) {
			t.Errorf("%s: Encode %s (%v)\nwant %s (%v)", name, m.Data, err, want, werr)
		}
	}
	e := base
	e.Time = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, err := Encode(e, "callcenter", "acme"); err == nil {
		t.Error("year 10000 encoded")
	}
}
