package events

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// SpecVersion is the CloudEvents version of every envelope.
const SpecVersion = "1.0"

// ContentType is the NATS Content-Type header of a structured-mode CloudEvent.
const ContentType = "application/cloudevents+json"

// Header names of the contract: every published message carries the event id as
// HeaderID and ContentType as HeaderContentType; trace context travels in the
// lower-case W3C headers traceparent and tracestate.
const (
	HeaderID          = "Nats-Msg-Id"
	HeaderContentType = "Content-Type"
)

// sourcePrefix starts the source of every event; the account follows it.
const sourcePrefix = "urn:callbus:account:"

// Envelope is a CloudEvents 1.0 event in structured mode: the whole NATS message
// body. Field order is the wire order.
type Envelope struct {
	SpecVersion     string    `json:"specversion"`
	ID              string    `json:"id"`
	Source          string    `json:"source"`
	Type            Type      `json:"type"`
	Subject         string    `json:"subject"`
	Time            time.Time `json:"time"`
	DataContentType string    `json:"datacontenttype"`
	// DataSchema is the URI of the JSON Schema of Data, with its version
	// (DataSchema(type, version)). Every event callbus publishes carries it; events
	// published before it existed do not, and their data is version 1.
	DataSchema string          `json:"dataschema,omitempty"`
	Data       json.RawMessage `json:"data"`
	// History is true on events a backfill derived from the account export
	// rather than a live poll (extension attribute callbushistory; absent on
	// live events). Such an event has the id, type, subject, time and data the
	// live event would have had.
	History bool `json:"callbushistory,omitempty"`
	// Policy is the version of the account's data policy that produced the
	// event (extension attribute callbuspolicy): personal fields in its data
	// may be hashed, masked or dropped as that policy says. Absent when the
	// account has no policy: every value is as the API gave it.
	Policy string `json:"callbuspolicy,omitempty"`
}

// Source is the CloudEvents source of every event of an account.
func Source(account string) string { return sourcePrefix + account }

// Account returns the account of a source made by Source, and false for any other
// source.
func Account(source string) (string, bool) {
	account, ok := strings.CutPrefix(source, sourcePrefix)
	return account, ok && ValidToken(account)
}

// Validate checks the envelope's required attributes and that its type is in the
// Catalog. Decode does the same checks but accepts types outside the catalog.
func (e Envelope) Validate() error {
	if err := e.validateAttributes(); err != nil {
		return err
	}
	if !Known(e.Type) {
		return fmt.Errorf("event %q: unknown type %q", e.ID, e.Type)
	}
	return nil
}

// validateAttributes checks every attribute but the type's membership of the
// catalog.
func (e Envelope) validateAttributes() error {
	switch {
	case e.SpecVersion != SpecVersion:
		return fmt.Errorf("event %q: specversion %q, want %q", e.ID, e.SpecVersion, SpecVersion)
	case e.ID == "" || e.Source == "" || e.Subject == "" || e.Type == "":
		return fmt.Errorf("event %q: id, source, type and subject are required", e.ID)
	case e.Time.IsZero():
		return fmt.Errorf("event %q: time is required", e.ID)
	case e.DataContentType != "application/json":
		return fmt.Errorf("event %q: datacontenttype %q", e.ID, e.DataContentType)
	case !json.Valid(e.Data):
		return fmt.Errorf("event %q: data is not JSON", e.ID)
	}
	return nil
}
