package events

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// ErrInvalid is wrapped by every error of Decode and DecodeMsg: the message is not
// an event of this contract (bad JSON, a missing or wrong attribute, data that does
// not fit its type). Redelivering it cannot help; dead-letter it.
var ErrInvalid = errors.New("invalid event")

// Meta is the envelope of a decoded event without its data: the CloudEvents
// attributes every event has.
type Meta struct {
	ID      string    // deterministic: a republished event has the same id
	Source  string    // "urn:callbus:account:<account>"
	Type    Type      // may be outside the Catalog (see UnknownEvent)
	Subject string    // the entity, e.g. "calls/812/participants/4431"
	Time    time.Time // when the record dates the change, UTC (see package doc): not an order
	// DataSchema is the URI of the schema of the data, with its version (see
	// DataSchema); empty on events published before callbus sent it (version 1).
	DataSchema string
	History    bool // derived from the account export by a backfill, not a live poll
	// Policy is the version of the data policy that produced the event
	// (extension attribute callbuspolicy), "" when the account has none.
	Policy string
	// Truncated is set on an event the relay published reduced, because it was
	// larger than NATS accepts (extension attribute callbustruncated): each value
	// of data cut, as <JSON pointer into data>=<original length>, comma-separated.
	// See DataEmptied for its last-resort form.
	Truncated string
}

// DataEmptied tells whether the relay published the event in its last-resort
// form (Truncated "=<bytes of data>"): its data did not fit even cut, and was
// sent as {}. The typed Data is then zero: only Subject names the entity; read
// the record from the API.
func (m *Meta) DataEmptied() bool { return strings.HasPrefix(m.Truncated, "=") }

// Metadata returns m; it makes every typed event an Event.
func (m *Meta) Metadata() Meta { return *m }

// Account is the account of the event, from its source.
func (m *Meta) Account() string {
	a, _ := Account(m.Source)
	return a
}

// Event is a decoded event: one of the *...Event types of this package, or
// *UnknownEvent for a type outside the Catalog. Switch on its dynamic type.
type Event interface {
	Metadata() Meta
	meta() *Meta // the embedded Meta, for Decode
	data() any   // a pointer to the event's Data, for Decode
}

// Decode parses a message body (a structured-mode CloudEvent), validates its
// envelope and returns the typed event. A type outside the Catalog decodes to
// *UnknownEvent with its data raw, so that a consumer built before a type was added
// can acknowledge it. Every error wraps ErrInvalid. It is safe for concurrent use.
func Decode(body []byte) (Event, error) {
	var e struct {
		Envelope
		Truncated string `json:"callbustruncated"`
	}
	if err := json.Unmarshal(body, &e); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if err := e.validateAttributes(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if _, ok := Account(e.Source); !ok {
		return nil, fmt.Errorf("%w: event %q: source %q is not %s<account>", ErrInvalid, e.ID, e.Source, sourcePrefix)
	}
	ev := newEvent(e.Type)
	if e.DataSchema != "" {
		// Data of another version of the type than the Go types describe (one
		// published beside it during a deprecation window) stays raw.
		if t, v, ok := ParseDataSchema(e.DataSchema); !ok || t != e.Type || v != Version(e.Type) {
			ev = &UnknownEvent{}
		}
	}
	*ev.meta() = Meta{ID: e.ID, Source: e.Source, Type: e.Type, Subject: e.Subject, Time: e.Time, DataSchema: e.DataSchema, History: e.History, Policy: e.Policy, Truncated: e.Truncated}
	if err := json.Unmarshal(e.Data, ev.data()); err != nil {
		return nil, fmt.Errorf("%w: event %q: data of %s: %w", ErrInvalid, e.ID, e.Type, err)
	}
	return ev, nil
}

// Msg is what DecodeMsg needs of a message; a jetstream.Msg or a *nats.Msg's
// methods fit it, so this package does not depend on a NATS client.
type Msg interface {
	Subject() string
	Data() []byte
}

// DecodeMsg decodes m's body like Decode and checks that m's subject ends with the
// event's account and type (<prefix>.<account>.<type>), which a message published
// on the wrong subject would not.
func DecodeMsg(m Msg) (Event, error) {
	ev, err := Decode(m.Data())
	if err != nil {
		return nil, err
	}
	md := ev.Metadata()
	if want := "." + md.Account() + "." + string(md.Type); !strings.HasSuffix(m.Subject(), want) {
		return nil, fmt.Errorf("%w: event %q on subject %q, want a subject ending %q", ErrInvalid, md.ID, m.Subject(), want)
	}
	return ev, nil
}

// meta gives Decode the Meta embedded in every event.
func (m *Meta) meta() *Meta { return m }
