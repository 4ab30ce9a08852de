package event

import (
	"encoding/json"
	"fmt"
	"github.com/callbus/callbus/events"
	"time"
)

// Message is one event as it travels from the differ to the stream: the envelope
// marshalled once, with what the outbox, the relay and the metrics need to know of
// it, so that none of them decodes the body again.
type Message struct {
	ID      string      // the event id: HeaderID
	Subject string      // the NATS subject, <prefix>.<account>.<type>
	Type    events.Type // the envelope's type
	Time    time.Time   // the envelope's time
	Data    []byte      // the message body: the envelope as JSON
	// Headers are extra headers to publish with it, such as the trace context of
	// the poll cycle that found the change (lower-case traceparent); may be nil.
	Headers map[string]string
}

// Encode marshals the envelope e of an event of account into the message published
// under prefix, on the subject of its type and version (events.VersionSubject): the body is what json.Marshal(e) writes, built in one pass around
// e.Data, which is written as it is (not validated nor compacted again: New's data
// is compact JSON already). It fails only when an attribute cannot be encoded (a
// time outside the years 0–9999).
func Encode(e events.Envelope, prefix, account string) (Message, error) {
	return encode(e, events.VersionSubject(prefix, account, e.Type, dataVersion(e)))
}

// encode is Encode with the subject made by the caller.
func encode(e events.Envelope, subject string) (Message, error) {
	body, err := appendEnvelope(make([]byte, 0, bodySize(e)), e)
	if err != nil {
		return Message{}, fmt.Errorf("encode event %s: %w", e.ID, err)
	}
	return Message{
		ID:      e.ID,
		Subject: subject,
		Type:    e.Type,
		Time:    e.Time,
		Data:    body,
	}, nil
}

// RestoreHead sets m's Type and Time from its body. It is for messages stored
// before Type and Time were stored next to the body (outbox entries of earlier
// releases); it returns an error, and leaves m unchanged, when the body is not a
// JSON object with a string type and an RFC 3339 time (or none).
func (m *Message) RestoreHead() error {
	var head struct {
		Type events.Type `json:"type"`
		Time time.Time   `json:"time"`
	}
	if err := json.Unmarshal(m.Data, &head); err != nil {
		return fmt.Errorf("event %s: read type and time from the body: %w", m.ID, err)
	}
	m.Type, m.Time = head.Type, head.Time
	return nil
}
