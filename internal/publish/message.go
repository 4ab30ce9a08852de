package publish

import (
	"time"

	"github.com/callbus/callbus/internal/event"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// HeaderOutboxID carries the outbox (Redis stream) id of a published event, so a
// relay that restarts after the duplicate window can still tell which outbox
// entries were already published (see publishedSince).
const HeaderOutboxID = "Callbus-Outbox-Id"

// Record is one outbox entry to publish: the message event shaped, and where the
// outbox holds it.
type Record struct {
	StreamID    string    // position in the outbox, opaque here: HeaderOutboxID, and what TrimOutbox takes
	CommittedAt time.Time // when the outbox took it (the store's clock)
	event.Message
}

// message builds the NATS message of r for stream: r's body under r's subject,
// with r's extra headers and the contract's.
func message(r Record, stream string) *nats.Msg {
	h := make(nats.Header, len(r.Headers)+4)
	for k, v := range r.Headers {
		// Set canonicalizes keys; trace headers must stay lower-case (W3C), so assign.
		h[k] = []string{v}
	}
	h[event.HeaderID] = []string{r.ID}
	h[event.HeaderContentType] = []string{event.ContentType}
	h[jetstream.ExpectedStreamHeader] = []string{stream}
	h[HeaderOutboxID] = []string{r.StreamID}
	return &nats.Msg{Subject: r.Subject, Header: h, Data: r.Data}
}
