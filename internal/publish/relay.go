package publish

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/callbus/callbus/internal/event"
	"github.com/callbus/callbus/internal/streamread"
	"github.com/callbus/callbus/internal/telemetry"
	"github.com/cenkalti/backoff/v4"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Outbox is what the relay needs of the store: entries in commit order, and
// trimming of the ones it has published. (cursor.Store, through a small adapter.)
type Outbox interface {
	// ReadOutbox returns up to count entries after the entry with id after ("" for
	// the beginning), oldest first, each with the time it was committed.
	ReadOutbox(ctx context.Context, after string, count int) ([]Record, error)
	// TrimOutbox removes every entry up to and including upTo, and no newer one.
	TrimOutbox(ctx context.Context, upTo string) error
}

// RelayConfig tunes the relay; zero values take the defaults in brackets.
type RelayConfig struct {
	Stream  string        // stream name, required: Nats-Expected-Stream
	Filter  string        // subjects of this account, for resuming: <prefix>.<account>.>
	Batch   int           // outbox entries read at a time [256]
	AckWait time.Duration // how long to wait for one acknowledgement [10s]
	Idle    time.Duration // how often to look at an empty outbox without a Wake [250ms]
}

// Stats are the relay's counters, safe to read while it runs.
type Stats struct {
	Published  atomic.Int64 // messages acknowledged as new
	Duplicates atomic.Int64 // acknowledged as duplicates (already in the stream)
	Errors     atomic.Int64 // failed publishes (retried)
	Skipped    atomic.Int64 // outbox entries found already in the stream at start
}

// Relay moves outbox entries to JetStream. Run it in one goroutine; Wake may be
// called from any goroutine.
type Relay struct {
	pub     jetstream.Publisher
	streams jetstream.StreamManager // to read the stream back when resuming
	outbox  Outbox
	cfg     RelayConfig
	log     zerolog.Logger
	wake    chan struct{}
	// OnPublished, when set, is called after each acknowledged record (for the
	// detection-delay metric and the demo feed). It must not block.
	OnPublished func(r Record, ack *jetstream.PubAck)
	// Tracer traces each publish as a child of the trace context the record
	// carries (the poll cycle that found the change), and the published message
	// carries the publish span's context on (no-op unless set).
	Tracer trace.Tracer
	Stats  Stats
}

// NewRelay returns a relay from outbox to the stream cfg.Stream: it publishes
// through pub and, to resume, reads the stream it finds through streams (one
// jetstream.JetStream serves as both).
func NewRelay(pub jetstream.Publisher, streams jetstream.StreamManager, outbox Outbox, cfg RelayConfig, log zerolog.Logger) *Relay {
	if cfg.Batch <= 0 {
		cfg.Batch = 256
	}
	if cfg.AckWait <= 0 {
		cfg.AckWait = 10 * time.Second
	}
	if cfg.Idle <= 0 {
		cfg.Idle = 250 * time.Millisecond
	}
	return &Relay{pub: pub, streams: streams, outbox: outbox, cfg: cfg, log: log, wake: make(chan struct{}, 1), Tracer: noop.NewTracerProvider().Tracer("")}
}

// Wake tells the relay that new entries were committed.
func (r *Relay) Wake() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Run relays until ctx ends, retrying failures with backoff forever (a NATS outage
// must not lose events: they wait in the outbox). It returns ctx's error.
//
// Order: entries are published asynchronously but acknowledged in outbox order;
// after a failure everything from the first unacknowledged entry is published again
// in order (JetStream drops the already-stored ones by Nats-Msg-Id), and the outbox
// is trimmed only up to the last entry acknowledged without a gap.
func (r *Relay) Run(ctx context.Context) error {
	bo := backoff.NewExponentialBackOff()
	bo.InitialInterval = 100 * time.Millisecond
	bo.MaxInterval = 5 * time.Second
	bo.MaxElapsedTime = 0 // never give up: the outbox holds the events meanwhile
	resumed := false
	last := ""
	for ctx.Err() == nil {
		var err error
		if !resumed {
			last, err = r.resume(ctx)
			resumed = err == nil
		}
		var n int
		if err == nil {
			n, last, err = r.once(ctx, last)
		}
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			r.Stats.Errors.Add(1)
			d := bo.NextBackOff()
			r.log.Warn().Err(err).Dur("retry_in", d).Msg("relay: publish failed; events stay in the outbox")
			sleep(ctx, d, nil)
			continue
		}
		bo.Reset()
		if n == 0 {
			sleep(ctx, r.cfg.Idle, r.wake)
		}
	}
	return ctx.Err()
}

// Drain relays until the outbox is empty or ctx ends: the last step of an orderly
// shutdown, after the poller has stopped committing.
func (r *Relay) Drain(ctx context.Context) error {
	last, err := r.resume(ctx)
	if err != nil {
		return err
	}
	for {
		n, next, err := r.once(ctx, last)
		if err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
		last = next
	}
}

// once publishes one batch after last and returns how many entries it handled and
// the new position.
func (r *Relay) once(ctx context.Context, last string) (int, string, error) {
	recs, err := r.outbox.ReadOutbox(ctx, last, r.cfg.Batch)
	if err != nil {
		return 0, last, fmt.Errorf("read outbox: %w", err)
	}
	if len(recs) == 0 {
		return 0, last, nil
	}
	acked, err := r.publish(ctx, recs)
	if acked > 0 {
		upTo := recs[acked-1].StreamID
		if terr := r.outbox.TrimOutbox(ctx, upTo); terr != nil && err == nil {
			// Published but not trimmed: the next read starts after upTo anyway, and
			// a restart republishes them as duplicates that JetStream drops.
			err = fmt.Errorf("trim outbox to %s: %w", upTo, terr)
		}
		last = upTo
	}
	return acked, last, err
}

// publish sends recs asynchronously and waits for their acks in order. It returns
// the length of the acknowledged prefix.
func (r *Relay) publish(ctx context.Context, recs []Record) (int, error) {
	futures := make([]jetstream.PubAckFuture, 0, len(recs))
	spans := make([]trace.Span, 0, len(recs))
	defer func() {
		for _, sp := range spans { // those not ended by an ack
			sp.End()
		}
	}()
	var sendErr error
	for _, rec := range recs {
		pctx, span := r.startSpan(ctx, rec)
		msg := message(rec, r.cfg.Stream)
		for k, v := range telemetry.Inject(pctx) {
			msg.Header[k] = []string{v} // lower-case traceparent/tracestate (W3C)
		}
		// No library retries: they would land out of order. A failure makes the
		// relay publish again from the first unacknowledged entry, in order.
		f, err := r.pub.PublishMsgAsync(msg, jetstream.WithRetryAttempts(0))
		if err != nil {
			span.SetStatus(codes.Error, err.Error())
			span.End()
			sendErr = fmt.Errorf("publish %s (%s): %w", rec.ID, rec.Subject, err)
			break
		}
		futures = append(futures, f)
		spans = append(spans, span)
	}
	for i, f := range futures {
		timer := time.NewTimer(r.cfg.AckWait)
		select {
		case ack := <-f.Ok():
			timer.Stop()
			if ack.Duplicate {
				r.Stats.Duplicates.Add(1)
			} else {
				r.Stats.Published.Add(1)
			}
			spans[i].SetAttributes(attribute.Int64("messaging.nats.stream.sequence", int64(ack.Sequence)), attribute.Bool("callbus.duplicate", ack.Duplicate))
			spans[i].End()
			if r.OnPublished != nil {
				r.OnPublished(recs[i], ack)
			}
		case err := <-f.Err():
			timer.Stop()
			spans[i].SetStatus(codes.Error, err.Error())
			spans = spans[i:]
			r.settle(ctx, futures[i+1:])
			return i, fmt.Errorf("publish %s (%s): %w", recs[i].ID, recs[i].Subject, err)
		case <-timer.C:
			spans = spans[i:]
			r.settle(ctx, futures[i+1:])
			return i, fmt.Errorf("publish %s (%s): no acknowledgement within %s", recs[i].ID, recs[i].Subject, r.cfg.AckWait)
		case <-ctx.Done():
			timer.Stop()
			spans = spans[i:]
			return i, ctx.Err()
		}
	}
	spans = nil
	return len(futures), sendErr
}

// startSpan starts the publish span of rec as a child of the trace context rec
// carries.
func (r *Relay) startSpan(ctx context.Context, rec Record) (context.Context, trace.Span) {
	return r.Tracer.Start(telemetry.Extract(ctx, rec.Headers), "publish "+rec.Subject, trace.WithSpanKind(trace.SpanKindProducer),
		trace.WithAttributes(attribute.String("messaging.system", "nats"), attribute.String("messaging.destination.name", rec.Subject),
			attribute.String("messaging.message.id", rec.ID)))
}

// settle waits (each at most AckWait) for publishes still in flight after a
// failure, so none of them lands after the republish that follows.
func (r *Relay) settle(ctx context.Context, fs []jetstream.PubAckFuture) {
	for _, f := range fs {
		t := time.NewTimer(r.cfg.AckWait)
		select {
		case <-f.Ok():
		case <-f.Err():
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
	}
}

// resume trims the outbox entries that a previous relay published (and got
// acknowledged) but did not trim before it stopped: the longest prefix of the outbox
// whose entries are all in the stream, found by reading this account's messages
// stored since shortly before the oldest entry was committed (Callbus-Outbox-Id
// header). An entry missing from the stream ends the prefix, even when later ones
// are there (a publish failed and a later one did not): everything from it is
// published again, in order, and JetStream drops the copies it still remembers.
// Without this, a relay that restarts after the duplicate window would publish
// those entries twice.
func (r *Relay) resume(ctx context.Context) (string, error) {
	if r.cfg.Filter == "" {
		return "", nil
	}
	head, err := r.outbox.ReadOutbox(ctx, "", 1)
	if err != nil {
		return "", fmt.Errorf("resume: read outbox: %w", err)
	}
	if len(head) == 0 {
		return "", nil
	}
	// Redis and NATS clocks may differ: look from a margin before the entry.
	since := head[0].CommittedAt.Add(-resumeMargin)
	published, err := r.publishedSince(ctx, since)
	if err != nil {
		return "", err
	}
	n, upTo, after := 0, "", ""
	for done := false; !done; {
		recs, err := r.outbox.ReadOutbox(ctx, after, r.cfg.Batch)
		if err != nil {
			return "", fmt.Errorf("resume: read outbox: %w", err)
		}
		for _, rec := range recs {
			if published[rec.StreamID] != rec.ID {
				done = true
				break
			}
			n, upTo = n+1, rec.StreamID
		}
		if len(recs) < r.cfg.Batch {
			done = true
		} else if !done {
			after = recs[len(recs)-1].StreamID
		}
	}
	if n == 0 {
		return "", nil
	}
	if err := r.outbox.TrimOutbox(ctx, upTo); err != nil {
		return "", fmt.Errorf("resume: trim outbox to %s: %w", upTo, err)
	}
	r.Stats.Skipped.Add(int64(n))
	r.log.Info().Int("entries", n).Str("outbox_id", upTo).Msg("relay: skipped outbox entries already in the stream")
	return "", nil
}

// resumeMargin is how far before the oldest outbox entry resume reads the stream.
const resumeMargin = 10 * time.Minute

// publishedSince maps the outbox id of each message of this account stored since
// the given time (up to the stream's end) to its event id.
func (r *Relay) publishedSince(ctx context.Context, since time.Time) (map[string]string, error) {
	s, err := r.streams.Stream(ctx, r.cfg.Stream)
	if err != nil {
		return nil, fmt.Errorf("resume: stream %s: %w", r.cfg.Stream, err)
	}
	out := map[string]string{}
	err = streamread.Read(ctx, s, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{r.cfg.Filter}, DeliverPolicy: jetstream.DeliverByStartTimePolicy, OptStartTime: &since,
		HeadersOnly: true,
	}, func(m jetstream.Msg, _ *jetstream.MsgMetadata) error {
		if id := m.Headers().Get(HeaderOutboxID); id != "" {
			out[id] = m.Headers().Get(event.HeaderID)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("resume: read the stream: %w", err)
	}
	return out, nil
}

// sleep waits for d, ctx's end, or a value on wake (nil: none).
func sleep(ctx context.Context, d time.Duration, wake <-chan struct{}) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	case <-wake:
	}
}
