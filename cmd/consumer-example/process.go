package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/callbus/callbus/events"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel/trace"
)

// commitFunc applies an event delivered at a stream sequence and marks it done,
// atomically (store.commit). Its errors are transient: retried, then dead-lettered
// at the last delivery.
type commitFunc func(ctx context.Context, ev events.Event, seq uint64) (outcome, string, error)

// processor decides the fate of each message: ack, nak, or term with a
// dead-letter copy; every path ends in exactly one of them unless the process dies
// first, and then the server redelivers it after the ack wait. It is safe for
// concurrent use: the consume loop runs one process call per message in hand.
type processor struct {
	commit        commitFunc
	claims        *claims
	dead          *deadLetters
	metrics       *metrics
	maxDeliver    int
	ackWaits      []time.Duration // of each delivery: BackOff
	heartbeat     time.Duration   // how often work in progress renews its ack wait (InProgress): AckWait/2
	handleTimeout time.Duration
	replica       string // a unique name of this process, in claims
	crash         *crashPoint
	log           zerolog.Logger
	tracer        trace.Tracer // nil: no traces

	outMu sync.Mutex
	out   io.Writer // one summary line per change (best effort: the line is not the state)
}

// process handles one message until its ack, nak or term.
func (p *processor) process(ctx context.Context, msg jetstream.Msg) {
	start := time.Now()
	defer func() { p.metrics.processing.Observe(time.Since(start).Seconds()) }()
	md, err := msg.Metadata()
	if err != nil { // not a JetStream delivery: there is nothing to acknowledge
		p.log.Error().Err(err).Str("subject", msg.Subject()).Msg("message without JetStream metadata")
		return
	}
	n := p.crash.next()
	if md.NumDelivered > 1 {
		p.metrics.redeliveries.Inc()
	}
	log := p.log.With().Uint64("seq", md.Sequence.Stream).Uint64("delivered", md.NumDelivered).Str("subject", msg.Subject()).Logger()
	if p.tracer != nil {
		var span trace.Span
		ctx, span = startSpan(ctx, p.tracer, msg.Headers(), msg.Subject())
		defer span.End()
	}
	ev, err := events.DecodeMsg(msg)
	if err != nil { // no retry can fix it
		p.deadLetter(ctx, msg, md, causeInvalid, err.Error(), log)
		return
	}
	p.crash.at("received", n)
	md2 := ev.Metadata()
	log = log.With().Str("event_id", md2.ID).Str("type", string(md2.Type)).Logger()
	if _, unknown := ev.(*events.UnknownEvent); unknown { // a type added after this build: not our business yet
		p.metrics.unknown.WithLabelValues(string(md2.Type)).Inc()
		p.ack(ctx, msg, "unknown", log)
		return
	}
	if md2.DataEmptied() {
		log.Warn().Str("entity", md2.Subject).Msg("event published without its data (too large for NATS): read the entity from the API")
	}
	out, err := p.work(ctx, msg, md, ev, log)
	if err != nil {
		p.failed(ctx, msg, md, err, log)
		return
	}
	p.crash.at("committed", n)
	p.ack(ctx, msg, out, log)
	p.crash.at("acked", n)
}

// work claims the event, commits it while keeping the message and the claim alive,
// and prints the change. outcome "" with no error: someone else holds the claim
// (the message has been nak'ed).
func (p *processor) work(ctx context.Context, msg jetstream.Msg, md *jetstream.MsgMetadata, ev events.Event, log zerolog.Logger) (outcome, error) {
	id := ev.Metadata().ID
	token := fmt.Sprintf("%s/%d", p.replica, md.Sequence.Stream)
	held, err := p.claims.claim(ctx, id, token)
	if err != nil {
		return "", err
	}
	wctx, cancel := context.WithTimeout(ctx, p.handleTimeout)
	defer cancel()
	if !held {
		if held, err = p.waitClaim(wctx, msg, id, token); !held {
			return "", cmp.Or(err, errBusy)
		}
	}
	stop := p.keepAlive(wctx, cancel, msg, id, token, log)
	out, line, err := p.safeCommit(wctx, ev, place(msg, md))
	stop()
	rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer rcancel()
	if rerr := p.claims.release(rctx, id, token); rerr != nil {
		log.Warn().Err(rerr).Msg("claim not released; it expires after the ack wait")
	}
	if err == nil && line != "" {
		p.print(ev.Metadata().Time, line)
	}
	return out, err
}

// place is the message's place in its entity's order: its stream sequence, or
// for a dead letter sent back by replay-dead-letters the sequence it had first,
// so that a replayed old event does not undo the newer ones applied meanwhile.
func place(msg jetstream.Msg, md *jetstream.MsgMetadata) uint64 {
	if first, err := strconv.ParseUint(msg.Headers().Get(HeaderReplayedSequence), 10, 64); err == nil && first > 0 && first < md.Sequence.Stream {
		return first
	}
	return md.Sequence.Stream
}

// errBusy: another delivery of the same event holds its claim right now.
var errBusy = errors.New("event claimed by another delivery")

// waitClaim waits for the claim of an event another delivery holds (the relay's
// resend of it being handled now, or a dead replica's claim running out), keeping
// this delivery's ack wait alive, so that the wait costs no delivery. false when
// ctx ends first (the handle timeout, a shutdown).
func (p *processor) waitClaim(ctx context.Context, msg jetstream.Msg, id, token string) (bool, error) {
	t := time.NewTicker(p.claims.beat())
	defer t.Stop()
	lastProgress := time.Now()
	for {
		select {
		case <-ctx.Done():
			return false, nil
		case <-t.C:
		}
		if time.Since(lastProgress) >= p.heartbeat {
			_ = msg.InProgress() // a lost one costs a redelivery, which the claim and the done mark absorb
			lastProgress = time.Now()
		}
		if held, err := p.claims.claim(ctx, id, token); held || err != nil {
			return held, err
		}
	}
}

// keepAlive renews the claim every claim beat and the message's ack wait
// (InProgress) every heartbeat until stop is called. When the claim is lost, the
// work is cancelled: someone else may be doing it.
func (p *processor) keepAlive(ctx context.Context, cancel context.CancelFunc, msg jetstream.Msg, id, token string, log zerolog.Logger) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(p.claims.beat())
		defer t.Stop()
		lastProgress := time.Now()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if time.Since(lastProgress) >= p.heartbeat {
				if err := msg.InProgress(); err != nil {
					log.Warn().Err(err).Msg("in progress not sent")
				}
				lastProgress = time.Now()
			}
			if held, err := p.claims.renew(ctx, id, token); err == nil && !held {
				p.metrics.lostClaims.Inc()
				log.Warn().Msg("claim lost while working; giving up this delivery")
				cancel()
				return
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

// safeCommit runs commit, turning a panic into a transient error so that a
// message that panics is retried and dead-lettered instead of crashing the service.
func (p *processor) safeCommit(ctx context.Context, ev events.Event, seq uint64) (out outcome, line string, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("handler panic: %v", r)
		}
	}()
	return p.commit(ctx, ev, seq)
}

// failed decides after an error: nak for a retry, or dead-letter at the last delivery.
func (p *processor) failed(ctx context.Context, msg jetstream.Msg, md *jetstream.MsgMetadata, err error, log zerolog.Logger) {
	switch {
	case ctx.Err() != nil: // shutting down: hand it back now rather than after the ack wait
		p.nak(msg, 0, log)
	case errors.Is(err, errBusy):
		p.nak(msg, p.heartbeat, log)
	case md.NumDelivered >= uint64(p.maxDeliver):
		p.deadLetter(ctx, msg, md, causeFailed, fmt.Sprintf("failed %d deliveries, last: %v", md.NumDelivered, err), log)
	default:
		log.Warn().Err(err).Msg("failed; retrying later")
		p.nak(msg, p.delay(md.NumDelivered), log)
	}
}

func (p *processor) print(at time.Time, line string) {
	p.outMu.Lock()
	defer p.outMu.Unlock()
	_, _ = fmt.Fprintf(p.out, "%s  %s\n", at.Format(time.TimeOnly), line)
}

// delay is the nak delay after a failure of delivery n that has the message
// redelivered after the ack wait of the next delivery (ackWaits[n]), so that a
// failure and a crash are retried on the same schedule (BackOff) and a failing
// message is dead-lettered after the sum of the redeliveries' ack waits
// (deadLetteredAfter). The server counts a nak's delay from the end of the first
// ack wait (ackWaits[0]) and then waits out the ack wait of the delivery that
// failed (ackWaits[n-1]) too: that excess is taken off here.
func (p *processor) delay(n uint64) time.Duration {
	last := len(p.ackWaits) - 1
	i := min(max(int(n), 1), last+1)
	want := p.ackWaits[min(i, last)]
	excess := p.ackWaits[min(i-1, last)] - p.ackWaits[0]
	return max(want-excess, time.Millisecond) // a BackOff that shrinks cannot be kept: as soon as the server allows
}

// deadLetteredAfter is how long a message that fails at every delivery takes
// from its first delivery to its dead letter: the ack waits of its redeliveries.
func deadLetteredAfter(ackWaits []time.Duration, maxDeliver int) time.Duration {
	var sum time.Duration
	for n := 1; n < maxDeliver; n++ {
		sum += ackWaits[min(n, len(ackWaits)-1)]
	}
	return sum
}

// ack acknowledges and waits for the server to confirm, so that a drained consumer
// knows its acks arrived; it is sent even when ctx has ended. A lost ack means a
// redelivery, which the done mark absorbs.
func (p *processor) ack(ctx context.Context, msg jetstream.Msg, out outcome, log zerolog.Logger) {
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := msg.DoubleAck(actx); err != nil {
		log.Warn().Err(err).Msg("ack not confirmed; a redelivery will be recognised as a duplicate")
	}
	p.metrics.messages.WithLabelValues(string(out)).Inc()
}

func (p *processor) nak(msg jetstream.Msg, delay time.Duration, log zerolog.Logger) {
	p.metrics.naks.Inc()
	if err := msg.NakWithDelay(delay); err != nil {
		log.Warn().Err(err).Msg("nak failed; redelivered after the ack wait")
	}
}
