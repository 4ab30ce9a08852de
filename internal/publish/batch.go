package publish

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/callbus/callbus/internal/telemetry"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// errWithdrawn reports a duplicate acknowledgement that points at a message no
// longer in the stream: the relay withdrew it (see reconcile), and JetStream
// remembers its id until the duplicate window has passed. The entry waits in the
// outbox, and the ones after it too, until the stream takes it again.
var errWithdrawn = errors.New("its earlier copy was withdrawn and the stream still remembers its id: waiting for the duplicate window to pass")

// inflight is one message sent and not yet acknowledged.
type inflight struct {
	f        jetstream.PubAckFuture
	span     trace.Span
	original int // size of the original body when it was sent reduced, else 0
}

// publish sends recs asynchronously and waits for their acks in order. It returns
// the length of the acknowledged prefix. It stops sending at until (zero: never),
// and at the first failure; after a failure it waits for the rest in flight, so
// that none lands after what is published next.
func (r *Relay) publish(ctx context.Context, recs []Record, until time.Time) (int, error) {
	sent, sendErr := r.send(ctx, recs, until)
	defer func() {
		for _, in := range sent { // those not ended by an ack
			if in.span != nil {
				in.span.End()
			}
		}
	}()
	for i := range sent {
		in := &sent[i]
		ack, err := r.ack(ctx, in.f)
		if err == nil && ack.Duplicate {
			err = r.stillStored(ctx, ack.Sequence)
		}
		if err != nil {
			in.span.SetStatus(codes.Error, err.Error())
			if ctx.Err() == nil {
				r.settle(ctx, sent[i+1:])
			}
			return i, fmt.Errorf("publish %s (%s): %w", recs[i].ID, recs[i].Subject, err)
		}
		r.acked(recs[i], ack, in)
	}
	return len(sent), sendErr
}

// send starts publishing recs, in order, until one cannot be sent or until.
func (r *Relay) send(ctx context.Context, recs []Record, until time.Time) ([]inflight, error) {
	sent := make([]inflight, 0, len(recs))
	for i, rec := range recs {
		_, withdrawn := r.withdrawn[rec.ID]
		if withdrawn && i > 0 {
			break // sent alone, in the next batch
		}
		in, err := r.sendOne(ctx, rec, until)
		if err != nil || in.f == nil {
			return sent, err
		}
		sent = append(sent, in)
		if withdrawn {
			// Alone: until the stream takes it again (errWithdrawn), nothing after
			// it may be stored.
			break
		}
	}
	return sent, nil
}

// sendOne starts publishing rec, reduced when too large. It sends nothing, and
// returns no future and no error, once until has passed.
func (r *Relay) sendOne(ctx context.Context, rec Record, until time.Time) (inflight, error) {
	pctx, span := r.startSpan(ctx, rec)
	msg := message(rec, r.cfg.Stream)
	for k, v := range telemetry.Inject(pctx) {
		msg.Header[k] = []string{v} // lower-case traceparent/tracestate (W3C)
	}
	original, err := r.shrink(msg)
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
		span.End()
		return inflight{}, fmt.Errorf("publish %s (%s): %w", rec.ID, rec.Subject, err)
	}
	if !until.IsZero() && !time.Now().Before(until) {
		// Checked last, right before sending: the lease was confirmed too long ago
		// (this process may have been paused), another replica may lead by now.
		// The next batch asks again.
		span.End()
		r.log.Info().Str("outbox_id", rec.StreamID).Msg("relay: lease confirmation expired mid-batch; confirming again")
		return inflight{}, nil
	}
	// No library retries: they would land out of order. A failure makes the relay
	// reconcile and publish again from the first missing entry.
	f, err := r.pub.PublishMsgAsync(msg, jetstream.WithRetryAttempts(0))
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
		span.End()
		return inflight{}, fmt.Errorf("publish %s (%s): %w", rec.ID, rec.Subject, err)
	}
	return inflight{f: f, span: span, original: original}, nil
}

// ack waits for f's acknowledgement, at most AckWait.
func (r *Relay) ack(ctx context.Context, f jetstream.PubAckFuture) (*jetstream.PubAck, error) {
	timer := time.NewTimer(r.cfg.AckWait)
	defer timer.Stop()
	select {
	case ack := <-f.Ok():
		return ack, nil
	case err := <-f.Err():
		return nil, err
	case <-timer.C:
		return nil, fmt.Errorf("no acknowledgement within %s", r.cfg.AckWait)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// acked records rec's acknowledgement: counters, span, callbacks.
func (r *Relay) acked(rec Record, ack *jetstream.PubAck, in *inflight) {
	if ack.Duplicate {
		r.Stats.Duplicates.Add(1)
	} else {
		r.Stats.Published.Add(1)
		delete(r.withdrawn, rec.ID)
		if in.original > 0 {
			r.Stats.Truncated.Add(1)
			r.log.Warn().Str("event_id", rec.ID).Str("subject", rec.Subject).Int("original_bytes", in.original).
				Msg("relay: event larger than the server accepts, published reduced (callbustruncated)")
			if r.onTruncated != nil {
				r.onTruncated(rec, in.original)
			}
		}
	}
	in.span.SetAttributes(attribute.Int64("messaging.nats.stream.sequence", int64(ack.Sequence)), attribute.Bool("callbus.duplicate", ack.Duplicate))
	in.span.End()
	in.span = nil
	if r.onPublished != nil {
		r.onPublished(rec, ack)
	}
}

// stillStored confirms that a duplicate acknowledgement's sequence still holds
// the message (errWithdrawn when it does not). Duplicates are rare (republishing
// after a failure or a restart), so the extra request costs little.
func (r *Relay) stillStored(ctx context.Context, seq uint64) error {
	if r.stream == nil {
		return nil
	}
	_, err := r.stream.GetMsg(ctx, seq)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return fmt.Errorf("duplicate of stream sequence %d: %w", seq, errWithdrawn)
	}
	if err != nil {
		return fmt.Errorf("check duplicate of stream sequence %d: %w", seq, err)
	}
	return nil
}

// startSpan starts the publish span of rec as a child of the trace context rec
// carries.
func (r *Relay) startSpan(ctx context.Context, rec Record) (context.Context, trace.Span) {
	return r.tracer.Start(telemetry.Extract(ctx, rec.Headers), "publish "+rec.Subject, trace.WithSpanKind(trace.SpanKindProducer),
		trace.WithAttributes(attribute.String("messaging.system", "nats"), attribute.String("messaging.destination.name", rec.Subject),
			attribute.String("messaging.message.id", rec.ID)))
}

// settle waits (each at most AckWait) for publishes still in flight after a
// failure, so none of them lands after the republish that follows.
func (r *Relay) settle(ctx context.Context, rest []inflight) {
	for _, in := range rest {
		_, _ = r.ack(ctx, in.f)
	}
}

// shrink reduces msg's body in place when msg is larger than the server or the
// stream accepts, and returns the original body's size (0 when it fits as it is).
func (r *Relay) shrink(msg *nats.Msg) (int, error) {
	limit := r.limit()
	hdr := headerSize(msg.Header)
	if limit <= 0 || int64(hdr+len(msg.Data)) <= limit {
		return 0, nil
	}
	body, _, err := fit(msg.Data, int(limit)-hdr)
	if err != nil {
		return 0, fmt.Errorf("reduce %d bytes to the limit of %d: %w", hdr+len(msg.Data), limit, err)
	}
	original := len(msg.Data)
	msg.Data = body
	return original, nil
}

// limit is the largest message, headers included, that the server and the stream
// take; 0 when neither is known.
func (r *Relay) limit() int64 {
	var l int64
	if r.maxPayload != nil {
		l = r.maxPayload()
	}
	if r.maxMsg > 0 && (l <= 0 || r.maxMsg < l) {
		l = r.maxMsg
	}
	return l
}

// headerSize is the size of h as nats.go writes it ("NATS/1.0\r\n", a line per
// value, an empty line), which counts toward the payload limit.
func headerSize(h nats.Header) int {
	n := len("NATS/1.0\r\n\r\n")
	for k, vs := range h {
		for _, v := range vs {
			n += len(k) + len(": \r\n") + len(v)
		}
	}
	return n
}
