// Package event is the producer side of callbus's event contract (DESIGN §3): it
// builds envelopes with their deterministic ids and the messages the relay
// publishes. The contract itself (envelope, types, data, subjects) is defined once,
// in the public events package, and every callbus package names it there
// (events.Envelope, events.CallCreated): this package owns only what the producer
// does with it (New, ids, Encode, Message, headers, truncation, MsgID).
package event

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/callbus/callbus/events"
)

// New builds the envelope of an event of type t about entity (a path such as
// "calls/812/participants/4431"), observed at time at, whose new state is identified
// by stateKey (see ID), with data marshalled to JSON. A json.RawMessage is taken as
// it is, not compacted again: it must be JSON as json.Marshal writes it (the diff's
// data is), since Encode writes it into the body unchanged.
func New(account string, t events.Type, entity, stateKey string, at time.Time, data any) (events.Envelope, error) {
	raw, ok := data.(json.RawMessage)
	if !ok {
		var err error
		if raw, err = json.Marshal(data); err != nil {
			return events.Envelope{}, fmt.Errorf("event %s %s: marshal data: %w", t, entity, err)
		}
	}
	return NewData(account, events.Source(account), t, entity, []byte(stateKey), at, raw), nil
}

// NewData is New for data already marshalled as json.Marshal writes it, the
// source (events.Source(account)) made by the caller: the diff makes an envelope
// per event, and builds the state key and the source once for many.
func NewData(account, source string, t events.Type, entity string, stateKey []byte, at time.Time, data json.RawMessage) events.Envelope {
	return events.Envelope{
		SpecVersion:     events.SpecVersion,
		ID:              id(account, t, entity, stateKey),
		Source:          source,
		Type:            t,
		Subject:         entity,
		Time:            at.UTC(),
		DataContentType: "application/json",
		DataSchema:      currentSchema(t),
		Data:            data,
	}
}
