package event

import (
	"testing"
	"time"

	"github.com/callbus/callbus/events"
)

// BenchmarkEncodeHistory: the message of a participant.status_changed event
// read from history (the history attribute set), as a backlog encodes each.
func BenchmarkEncodeHistory(b *testing.B) {
	at := time.Date(2026, 11, 24, 9, 30, 0, 123456789, time.UTC)
	e, err := New("acme", events.ParticipantStatusChanged, "calls/812/participants/4431", "e1/5/9c1e07a2b4d3", at,
		map[string]any{"call_id": 812, "participant": map[string]any{"id": 4431, "call_status": 4}, "previous": 3, "current": 4})
	if err != nil {
		b.Fatal(err)
	}
	e.History = true
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Encode(e, "callcenter", "acme"); err != nil {
			b.Fatal(err)
		}
	}
}
