// Package event is the Go side of callbus's external contract (DESIGN §3): the
// CloudEvents envelope, the event types of the catalog, their NATS subjects and
// their deterministic ids. It does no I/O.
package event

import (
	"encoding/json"
	"fmt"
	"time"
)

// SpecVersion is the CloudEvents version of every envelope.
const SpecVersion = "1.0"

// ContentType is the NATS Content-Type header of a structured-mode CloudEvent.
const ContentType = "application/cloudevents+json"

// Envelope is a CloudEvents 1.0 event in structured mode: the whole NATS message
// body. Field order is the wire order.
type Envelope struct {
	SpecVersion     string          `json:"specversion"`
	ID              string          `json:"id"`
	Source          string          `json:"source"`
	Type            Type            `json:"type"`
	Subject         string          `json:"subject"`
	Time            time.Time       `json:"time"`
	DataContentType string          `json:"datacontenttype"`
	Data            json.RawMessage `json:"data"`
	Origin                          // extension attributes: history.go
}

// Source is the CloudEvents source of every event of an account.
func Source(account string) string { return "urn:callbus:account:" + account }

// New builds the envelope of an event of type t about entity (a path such as
// "calls/812/participants/4431"), observed at time at, whose new state is identified
// by stateKey (see ID), with data marshalled to JSON.
func New(account string, t Type, entity, stateKey string, at time.Time, data any) (Envelope, error) {
	raw, err := json.Marshal(data)
	if err != nil {
		return Envelope{}, fmt.Errorf("event %s %s: marshal data: %w", t, entity, err)
	}
	return Envelope{
		SpecVersion:     SpecVersion,
		ID:              ID(account, t, entity, stateKey),
		Source:          Source(account),
		Type:            t,
		Subject:         entity,
		Time:            at.UTC(),
		DataContentType: "application/json",
		Data:            raw,
	}, nil
}

// Validate checks the envelope's required attributes.
func (e Envelope) Validate() error {
	switch {
	case e.SpecVersion != SpecVersion:
		return fmt.Errorf("event %q: specversion %q, want %q", e.ID, e.SpecVersion, SpecVersion)
	case e.ID == "" || e.Source == "" || e.Subject == "":
		return fmt.Errorf("event %q: id, source and subject are required", e.ID)
	case !Known(e.Type):
		return fmt.Errorf("event %q: unknown type %q", e.ID, e.Type)
	case e.Time.IsZero():
		return fmt.Errorf("event %q: time is required", e.ID)
	case e.DataContentType != "application/json":
		return fmt.Errorf("event %q: datacontenttype %q", e.ID, e.DataContentType)
	case !json.Valid(e.Data):
		return fmt.Errorf("event %q: data is not JSON", e.ID)
	}
	return nil
}
