package event

import (
	"bytes"
	"encoding/json"
	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/schemas"
	"testing"
	"time"
)

// addExamples seeds f with the published example events (schemas/examples).
func addExamples(f *testing.F) {
	for _, b := range schemas.Examples() {
		f.Add(b)
	}
	for _, s := range []string{`{}`, `null`, `[]`, `{"type":1}`, `{"time":""}`, `{"time":"2026-11-24T09:30:00+01:00","data":null}`} {
		f.Add([]byte(s))
	}
}

// FuzzDecodeEnvelope checks what a consumer does with a body (audit, replay
// --pretty): whatever decodes as an Envelope encodes and decodes to the same
// envelope, its type and time are what RestoreHead reads from the body, and a valid
// one makes a Message whose body restores the same head.
func FuzzDecodeEnvelope(f *testing.F) {
	addExamples(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		var e events.Envelope
		if json.Unmarshal(body, &e) != nil {
			return
		}
		head := Message{Data: body}
		if err := head.RestoreHead(); err != nil || head.Type != e.Type || !head.Time.Equal(e.Time) {
			t.Fatalf("envelope type %q time %v, RestoreHead: %q %v %v", e.Type, e.Time, head.Type, head.Time, err)
		}
		requireRoundTrip(t, e)
		if e.Validate() != nil {
			return
		}
		m, err := Encode(e, "callcenter", "acme")
		if err != nil {
			t.Fatalf("valid envelope %+v: %v", e, err)
		}
		// Data as json.Marshal writes it (New's) is written unchanged: the body
		// is json.Marshal's.
		if norm, _ := json.Marshal(e.Data); bytes.Equal(norm, e.Data) {
			if want, _ := json.Marshal(e); !bytes.Equal(m.Data, want) {
				t.Fatalf("Encode wrote\n%s\njson.Marshal writes\n%s", m.Data, want)
			}
		}
		again := Message{Data: m.Data}
		if err := again.RestoreHead(); err != nil || again.Type != e.Type || !again.Time.Equal(e.Time) {
			t.Fatalf("message of %q %v restores %q %v %v", e.Type, e.Time, again.Type, again.Time, err)
		}
	})
}

// requireRoundTrip fails unless e encodes, decodes to an equal envelope and
// encodes to the same bytes again.
func requireRoundTrip(t *testing.T, e events.Envelope) {
	t.Helper()
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatalf("decoded envelope %+v does not encode: %v", e, err)
	}
	var e2 events.Envelope
	if err := json.Unmarshal(b, &e2); err != nil {
		t.Fatalf("encoded envelope %s does not decode: %v", b, err)
	}
	// An envelope without data encodes "data":null, which reads back as valid JSON:
	// only envelopes with data keep their validity.
	sameValidity := e.Data == nil || (e.Validate() == nil) == (e2.Validate() == nil)
	b2, err := json.Marshal(e2)
	if err != nil || !bytes.Equal(b, b2) || !e.Time.Equal(e2.Time) || !sameValidity {
		t.Fatalf("round trip changed the envelope:\n%s\n%s (%v)", b, b2, err)
	}
}

// FuzzRestoreHead checks RestoreHead's contract on any stored body: no panic, and
// on error the message is left as it was.
func FuzzRestoreHead(f *testing.F) {
	addExamples(f)
	at := time.Date(2026, 11, 24, 9, 30, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, body []byte) {
		m := Message{ID: "x", Type: events.CallCreated, Time: at, Data: body}
		if err := m.RestoreHead(); err != nil && (m.Type != events.CallCreated || !m.Time.Equal(at)) {
			t.Fatalf("RestoreHead failed (%v) but changed the message to %q %v", err, m.Type, m.Time)
		}
	})
}
