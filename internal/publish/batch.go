package publish

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/callbus/callbus/internal/event"
	"github.com/callbus/callbus/internal/telemetry"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// errWithdrawn reports a duplicate acknowledgement that points at a message no
// longer in the stream: an earlier copy was withdrawn (see reconcile) and the
// stream remembers its message id, but the relay's count of withdrawals did
// not know (Redis lost it). The count is raised, so the next publish of the
// entry goes out under a new message id, after a reconcile withdraws what got
// ahead of it meanwhile.
var errWithdrawn = errors.New("refused as a duplicate of a withdrawn copy: publishing it again under a new message id")

// inflight is one message sent and not yet acknowledged.
type inflight struct {
	rec      event.Committed
	seq      uint64 // its number in the relay's ackWindow
	span     trace.Span
	original int  // size of the original body when it was sent reduced, else 0
	healed   bool // an acknowledged entry the stream lost, sent again
}

// send starts publishing recs, in order, onto fl's queue, until one cannot be
// sent or until (zero: never). An entry withdrawn before goes out under a message
// id the stream has not seen (event.MsgID), so it is stored at once, in its
// place: nothing waits for the duplicate window.
func (r *Relay) send(ctx context.Context, fl *flight, recs []event.Committed, until time.Time) error {
	for _, rec := range recs {
		in, sent, err := r.sendOne(ctx, rec, until)
		if err != nil || !sent {
			return err
		}
		in.healed = fl.heal
		fl.queue = append(fl.queue, in)
		fl.next = rec.StreamID
	}
	return nil
}

// sendOne starts publishing rec, reduced when too large. It sends nothing, and
// returns false and no error, once until has passed.
func (r *Relay) sendOne(ctx context.Context, rec event.Committed, until time.Time) (inflight, bool, error) {
	pctx, span := r.startSpan(ctx, rec)
	msg, hdr := r.out.fill(rec, r.cfg.Stream, event.MsgID(rec.ID, r.withdrawn[rec.StreamID]))
	if span.IsRecording() {
		// Else the span is the record's own context, which message copied.
		for k, v := range telemetry.Inject(pctx) {
			msg.Header[k] = []string{v} // lower-case traceparent/tracestate (W3C)
		}
		hdr = headerSize(msg.Header)
	}
	original, err := r.shrink(msg, hdr)
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
		span.End()
		return inflight{}, false, fmt.Errorf("publish %s (%s): %w", rec.ID, rec.Subject, err)
	}
	if !until.IsZero() && !time.Now().Before(until) {
		// Checked last, right before sending: the lease was confirmed too long ago
		// (this process may have been paused), another replica may lead by now.
		// The next batch asks again.
		span.End()
		r.log.Info().Str("outbox_id", rec.StreamID).Msg("relay: lease confirmation expired mid-batch; confirming again")
		return inflight{}, false, nil
	}
	// No retries: they would land out of order. A failure makes the relay
	// reconcile and publish again from the first missing entry.
	seq, err := r.replies.publish(msg)
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
		span.End()
		return inflight{}, false, fmt.Errorf("publish %s (%s): %w", rec.ID, rec.Subject, err)
	}
	return inflight{rec: rec, seq: seq, span: span, original: original}, true, nil
}

// ack returns the acknowledgement or error of the message numbered seq, the
// oldest awaited, and true; when it is not in yet, nothing and false unless
// wait, then it waits at most AckWait.
func (r *Relay) ack(ctx context.Context, seq uint64, wait bool) (jetstream.PubAck, error, bool) {
	ack, err, ok := r.replies.take(seq)
	if !ok {
		if !wait {
			return jetstream.PubAck{}, nil, false
		}
		ack, err = r.replies.wait(ctx, seq, r.cfg.AckWait)
	}
	if err != nil {
		return jetstream.PubAck{}, err, true
	}
	return ack, nil, true
}

// acked records in's acknowledgement: counters, span, callbacks.
func (r *Relay) acked(ack jetstream.PubAck, in *inflight) {
	rec := in.rec
	if in.healed {
		r.Stats.Healed.Add(1)
	}
	if ack.Duplicate {
		r.Stats.Duplicates.Add(1)
	} else {
		r.Stats.Published.Add(1)
		if in.original > 0 {
			r.Stats.Truncated.Add(1)
			r.log.Warn().Str("event_id", rec.ID).Str("subject", rec.Subject).Int("original_bytes", in.original).
				Msg("relay: event larger than the server accepts, published reduced (callbustruncated)")
			if r.onTruncated != nil {
				r.onTruncated(rec, in.original)
			}
		}
	}
	if in.span.IsRecording() {
		in.span.SetAttributes(attribute.Int64("messaging.nats.stream.sequence", int64(ack.Sequence)), attribute.Bool("callbus.duplicate", ack.Duplicate))
	}
	in.span.End()
	in.span = nil
	if r.onPublished != nil {
		r.published = append(r.published, Published{rec, ack})
	}
}

// observe hands what acked gathered to the publish observer.
func (r *Relay) observe() {
	if len(r.published) == 0 {
		return
	}
	r.onPublished(r.published)
	clear(r.published) // keeps no record's body
	r.published = r.published[:0]
}

// stillStored confirms that the sequence a duplicate acknowledgement of rec
// names still holds the message; when it does not, it counts one more
// withdrawal of rec (see errWithdrawn). Duplicates are rare (republishing after a
// failure or a restart), so the extra request costs little.
func (r *Relay) stillStored(ctx context.Context, rec event.Committed, seq uint64) error {
	if r.stream == nil {
		return nil
	}
	_, err := r.stream.GetMsg(ctx, seq)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		if werr := r.withdraw(ctx, []string{rec.StreamID}); werr != nil {
			return werr
		}
		return fmt.Errorf("duplicate of stream sequence %d: %w", seq, errWithdrawn)
	}
	if err != nil {
		return fmt.Errorf("check duplicate of stream sequence %d: %w", seq, err)
	}
	return nil
}

// startSpan starts the publish span of rec as a child of the trace context rec
// carries. Without a tracer (the default) it does nothing: the span is a
// non-recording one, and the message carries the record's context as it is.
func (r *Relay) startSpan(ctx context.Context, rec event.Committed) (context.Context, trace.Span) {
	if r.untraced {
		return ctx, noopSpan
	}
	return r.tracer.Start(telemetry.Extract(ctx, rec.Headers), "publish "+rec.Subject, trace.WithSpanKind(trace.SpanKindProducer),
		trace.WithAttributes(attribute.String("messaging.system", "nats"), attribute.String("messaging.destination.name", rec.Subject),
			attribute.String("messaging.message.id", rec.ID)))
}

// noopSpan is the span of a relay without a tracer.
var noopSpan = trace.SpanFromContext(context.Background())

// shrink reduces msg's body in place when msg, with headers of hdr bytes, is
// larger than the server or the stream accepts, and returns the original body's
// size (0 when it fits as it is).
func (r *Relay) shrink(msg *nats.Msg, hdr int) (int, error) {
	limit := r.limit()
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
