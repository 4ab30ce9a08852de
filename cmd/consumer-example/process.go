package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/callbus/callbus/internal/event"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel/trace"
)

// handlerFunc does the downstream work for one event. It returns an error wrapped
// with poison for an event it can never handle (it is dead-lettered at once); any
// other error is transient (the event is retried, then dead-lettered after
// max-deliver attempts). It may be called again for an event it already handled
// (see dedup), so it must tolerate a repeat.
type handlerFunc func(ctx context.Context, e event.Envelope) error

// errPoison marks an event that no retry can fix.
var errPoison = errors.New("poison message")

func poison(err error) error { return fmt.Errorf("%w: %w", errPoison, err) }

// processor decides the fate of each message: ack, nak with a delay, or term with
// a dead-letter copy. Every path ends in exactly one of them, except when the
// context ends first: the message is then left for redelivery after the ack wait.
type processor struct {
	handle     handlerFunc
	dedup      *dedup
	dead       *deadLetters
	maxDeliver int
	retryDelay time.Duration
	log        zerolog.Logger
	tracer     trace.Tracer // nil: no traces
}

// process handles one message. It is called for one message at a time.
func (p *processor) process(ctx context.Context, msg jetstream.Msg) {
	md, err := msg.Metadata()
	if err != nil { // not a JetStream delivery: there is nothing to acknowledge
		p.log.Error().Err(err).Str("subject", msg.Subject()).Msg("message without JetStream metadata")
		return
	}
	log := p.log.With().Uint64("seq", md.Sequence.Stream).Uint64("delivered", md.NumDelivered).Str("subject", msg.Subject()).Logger()
	if p.tracer != nil {
		var span trace.Span
		ctx, span = startSpan(ctx, p.tracer, msg.Headers(), msg.Subject())
		defer span.End()
	}

	e, err := decode(msg.Data())
	if err != nil {
		p.deadLetter(ctx, msg, md, err.Error(), log)
		return
	}
	log = log.With().Str("event_id", e.ID).Str("type", string(e.Type)).Logger()

	state, err := p.dedup.claim(ctx, e.ID)
	switch {
	case err != nil: // our store is down, the message is fine: retry, never dead-letter
		log.Warn().Err(err).Msg("dedup store unavailable; retrying later")
		nak(msg, p.delay(md.NumDelivered), log)
		return
	case state == handled:
		log.Debug().Msg("duplicate: already handled")
		ack(ctx, msg, log)
		return
	case state == inFlight:
		nak(msg, p.retryDelay, log)
		return
	}

	if err := p.safeHandle(ctx, e); err != nil {
		if rerr := p.dedup.release(ctx, e.ID); rerr != nil {
			log.Warn().Err(rerr).Msg("claim not released; it expires after the ack wait")
		}
		switch {
		case errors.Is(err, errPoison):
			p.deadLetter(ctx, msg, md, err.Error(), log)
		case md.NumDelivered >= uint64(p.maxDeliver):
			p.deadLetter(ctx, msg, md, fmt.Sprintf("failed %d deliveries, last: %v", md.NumDelivered, err), log)
		default:
			log.Warn().Err(err).Msg("handler failed; retrying later")
			nak(msg, p.delay(md.NumDelivered), log)
		}
		return
	}
	if err := p.dedup.done(ctx, e.ID); err != nil {
		// Handled but not marked: the redelivery handles it again (at least once).
		log.Warn().Err(err).Msg("handled, but the mark failed; it will be handled again")
		nak(msg, p.delay(md.NumDelivered), log)
		return
	}
	ack(ctx, msg, log)
}

// safeHandle runs the handler, turning a panic into a transient error so that a
// message that panics is retried and dead-lettered instead of crashing the service.
func (p *processor) safeHandle(ctx context.Context, e event.Envelope) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("handler panic: %v", r)
		}
	}()
	return p.handle(ctx, e)
}

// deadLetter publishes a copy to the dead-letter subject, then terminates the
// message. If the copy cannot be stored, the message is kept (nak) rather than lost.
func (p *processor) deadLetter(ctx context.Context, msg jetstream.Msg, md *jetstream.MsgMetadata, reason string, log zerolog.Logger) {
	if err := p.dead.publish(ctx, msg, md, reason); err != nil {
		log.Error().Err(err).Str("reason", reason).Msg("dead-letter copy failed; keeping the message")
		nak(msg, p.delay(md.NumDelivered), log)
		return
	}
	log.Error().Str("reason", reason).Str("dead_letter", p.dead.subject(msg.Subject())).Msg("dead-lettered")
	if err := msg.TermWithReason(reason); err != nil {
		log.Warn().Err(err).Msg("term failed; the message will be redelivered and dead-lettered again")
	}
}

// delay is the redelivery delay after attempt n: retryDelay doubled per attempt, at most a minute.
func (p *processor) delay(n uint64) time.Duration {
	d := p.retryDelay
	for i := uint64(1); i < n && d < time.Minute; i++ {
		d *= 2
	}
	return min(d, time.Minute)
}

// decode parses and validates a CloudEvents envelope; any failure makes it poison.
func decode(data []byte) (event.Envelope, error) {
	var e event.Envelope
	if err := json.Unmarshal(data, &e); err != nil {
		return e, poison(fmt.Errorf("undecodable event: %w", err))
	}
	if err := e.Validate(); err != nil { // includes an unknown type
		return e, poison(err)
	}
	return e, nil
}

// ack acknowledges and waits for the server to confirm, so a drained consumer
// knows its acks arrived. A lost ack means a redelivery, which dedup absorbs.
func ack(ctx context.Context, msg jetstream.Msg, log zerolog.Logger) {
	if err := msg.DoubleAck(ctx); err != nil {
		log.Warn().Err(err).Msg("ack not confirmed; a redelivery will be recognised as a duplicate")
	}
}

func nak(msg jetstream.Msg, delay time.Duration, log zerolog.Logger) {
	if err := msg.NakWithDelay(delay); err != nil {
		log.Warn().Err(err).Msg("nak failed; redelivered after the ack wait")
	}
}
