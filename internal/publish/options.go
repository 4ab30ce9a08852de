package publish

import (
	"context"
	"time"

	"github.com/callbus/callbus/internal/event"
	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/otel/trace"
)

// RelayOption adds an optional collaborator to a Relay (functional options: the
// one way callbus passes optional collaborators, see ARCHITECTURE.md).
type RelayOption func(*Relay)

// WithPublishObserver calls f with the records acknowledged (the service's
// metrics and status page, the demo's feed): after each run of
// acknowledgements the relay takes, those of the run, in outbox order, so that
// what f does once per call (a clock reading, a lock, a metric per type) is done
// once per batch. f must not block nor keep the slice, which the relay reuses.
func WithPublishObserver(f func(published []Published)) RelayOption {
	return func(r *Relay) { r.onPublished = f }
}

// Published is a record the stream acknowledged, and the acknowledgement.
type Published struct {
	event.Committed
	Ack jetstream.PubAck
}

// WithTruncationObserver calls f once for each record stored in reduced form,
// with the size of its original body in bytes. f must not block.
func WithTruncationObserver(f func(r event.Committed, originalSize int)) RelayOption {
	return func(r *Relay) { r.onTruncated = f }
}

// WithMaxPayload gives the largest message the server accepts (nats.Conn's
// MaxPayload; 0 while unknown). Larger events are published reduced (see fit)
// instead of failing forever. Without it no limit is known.
func WithMaxPayload(f func() int64) RelayOption {
	return func(r *Relay) { r.maxPayload = f }
}

// WithFence confirms that this process still holds the account's lease and
// returns how long the confirmation holds (the lease's remaining time to live);
// an error when it does not hold it or cannot tell. The relay asks before each
// batch and sends nothing once the confirmation is older than fenceShare of that
// time, so a leader paused past its lease (SIGSTOP, a long GC, a frozen VM)
// cannot publish a stale batch after it wakes.
func WithFence(f func(ctx context.Context) (time.Duration, error)) RelayOption {
	return func(r *Relay) { r.fence = f }
}

// WithTracer traces each publish as a child of the trace context the record
// carries (the poll cycle that found the change); the published message carries
// the publish span's context on. Default: no traces.
func WithTracer(t trace.Tracer) RelayOption {
	return func(r *Relay) {
		if t != nil {
			r.tracer = t
		}
	}
}

// WithReconnects gives the count of the NATS connection's reconnections
// (nats.Conn's Stats().Reconnects). The relay reconciles with the stream each
// time it grows: a server that restarted may have lost messages it had
// acknowledged (it acknowledges before it syncs to disk), and the relay
// publishes them again from the outbox's retention. Without it the relay
// checks only at start and after a failed publish.
func WithReconnects(f func() uint64) RelayOption {
	return func(r *Relay) { r.reconnects = f }
}
