package publish

import (
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/event"
)

// HeaderOutboxID carries the outbox (Redis stream) id of a published event, so a
// relay that restarts after the duplicate window can still tell which outbox
// entries were already published (see publishedSince).
const HeaderOutboxID = "Callbus-Outbox-Id"

// outMsg is a message and the array of its header's values, allocated together:
// room for the contract's headers and the trace context (traceparent, tracestate).
// A relay fills one outMsg for every message it sends: nats.go has copied the
// headers and the body into its buffer when PublishMsg returns, and a message per
// event made a message, a header map and its values per event, a tenth of the
// poller's allocations on a backlog.
type outMsg struct {
	nats.Msg
	vals [contractHeaders + 2]string
}

// fill makes m the NATS message of r for stream: r's body under r's subject, with
// r's extra headers and the contract's, Nats-Msg-Id msgID (see event.MsgID); and
// the headers' size (headerSize), counted on the way. It reuses m's header map
// and values.
func (m *outMsg) fill(r event.Committed, stream, msgID string) (*nats.Msg, int) {
	vals := m.vals[:0]
	if n := len(r.Headers) + contractHeaders; n > len(m.vals) {
		vals = make([]string, 0, n)
	}
	h := m.Header
	if h == nil {
		h = make(nats.Header, len(r.Headers)+contractHeaders)
	} else {
		clear(h)
	}
	size := len(headerFraming)
	set := func(k, v string) {
		vals = append(vals, v)
		h[k] = vals[len(vals)-1 : len(vals) : len(vals)] // an Add to one cannot write into the next
		size += len(k) + len(headerLine) + len(v)
	}
	for k, v := range r.Headers {
		// Set canonicalizes keys; trace headers must stay lower-case (W3C), so assign.
		set(k, v)
	}
	set(events.HeaderID, msgID)
	set(events.HeaderContentType, events.ContentType)
	set(jetstream.ExpectedStreamHeader, stream)
	set(HeaderOutboxID, r.StreamID)
	if len(h) != len(vals) { // a header of the record's own was replaced: counted twice
		size = headerSize(h)
	}
	m.Msg = nats.Msg{Subject: r.Subject, Header: h, Data: r.Data}
	return &m.Msg, size
}

// contractHeaders is how many headers fill adds to a record's own.
const contractHeaders = 4

// How nats.go writes headers: the framing ("NATS/1.0\r\n", and an empty line
// after the headers) and, around each key and value, ": " and "\r\n".
const (
	headerFraming = "NATS/1.0\r\n\r\n"
	headerLine    = ": \r\n"
)

// headerSize is the size of h as nats.go writes it (a line per value), which
// counts toward the payload limit.
func headerSize(h nats.Header) int {
	n := len(headerFraming)
	for k, vs := range h {
		for _, v := range vs {
			n += len(k) + len(headerLine) + len(v)
		}
	}
	return n
}
