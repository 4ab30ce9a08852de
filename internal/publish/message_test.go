package publish

import (
	"testing"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/event"
)

// message counts its headers' size as nats.go writes them, also when a record's
// own header is one of the contract's; and every value is its own.
func TestMessageHeaderSize(t *testing.T) {
	for _, headers := range []map[string]string{
		nil,
		{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "tracestate": "a=1"},
		{events.HeaderID: "not the id", "x": "y"},
	} {
		rec := event.Committed{StreamID: "1-2", Message: event.Message{ID: "ev-1", Subject: "callcenter.acme.call.created", Data: []byte(`{}`), Headers: headers}}
		msg, size := new(outMsg).fill(rec, "CALLCENTER", rec.ID)
		if want := msg.Size() - len(msg.Subject) - len(msg.Data); size != want {
			t.Errorf("headers %v: size %d, nats.go writes %d", headers, size, want)
		}
		if got := msg.Header.Get(events.HeaderID); got != "ev-1" {
			t.Errorf("headers %v: %s %q, want ev-1", headers, events.HeaderID, got)
		}
		msg.Header.Add(events.HeaderID, "added")
		if got := msg.Header.Get(HeaderOutboxID); got != "1-2" || len(msg.Header.Values(events.HeaderID)) != 2 {
			t.Errorf("headers %v after an Add: %s %q, %s %q", headers, HeaderOutboxID, got, events.HeaderID, msg.Header.Values(events.HeaderID))
		}
	}
}
