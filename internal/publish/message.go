package publish

import (
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// HeaderOutboxID carries the outbox (Redis stream) id of a published event, so a
// relay that restarts after the duplicate window can still tell which outbox
// entries were already published (see lastPublished).
const HeaderOutboxID = "Callbus-Outbox-Id"

// Record is one outbox entry to publish.
type Record struct {
	StreamID string            // position in the outbox, e.g. "1700000000000-0"
	ID       string            // event id: becomes Nats-Msg-Id
	Subject  string            // NATS subject
	Data     []byte            // the CloudEvents JSON body
	Headers  map[string]string // extra headers (traceparent, tracestate)
}

// message builds the NATS message of r for stream.
func message(r Record, stream string) *nats.Msg {
	h := make(nats.Header, len(r.Headers)+4)
	for k, v := range r.Headers {
		// Set canonicalizes keys; trace headers must stay lower-case (W3C), so assign.
		h[k] = []string{v}
	}
	h[jetstream.MsgIDHeader] = []string{r.ID}
	h[jetstream.ExpectedStreamHeader] = []string{stream}
	h["Content-Type"] = []string{"application/cloudevents+json"}
	h[HeaderOutboxID] = []string{r.StreamID}
	return &nats.Msg{Subject: r.Subject, Header: h, Data: r.Data}
}
