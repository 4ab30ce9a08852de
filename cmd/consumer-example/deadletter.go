package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"
)

// Headers of a dead-lettered copy, besides the original message's own.
const (
	HeaderDLQReason     = "Callbus-Dlq-Reason"     // why it was given up
	HeaderDLQStream     = "Callbus-Dlq-Stream"     // the stream it came from
	HeaderDLQSequence   = "Callbus-Dlq-Sequence"   // its sequence there
	HeaderDLQSubject    = "Callbus-Dlq-Subject"    // its subject there: where replay sends it back
	HeaderDLQConsumer   = "Callbus-Dlq-Consumer"   // the consumer that gave up
	HeaderDLQDeliveries = "Callbus-Dlq-Deliveries" // deliveries before giving up
	// HeaderReplayedSequence is on a dead letter replay-dead-letters sent back:
	// its first sequence in the stream, the place it keeps in its entity's order.
	HeaderReplayedSequence = "Callbus-Replayed-Sequence"
)

// Causes of dead-lettering (the cause label of dead_letters_total).
const (
	causeInvalid       = "invalid"        // not an event of the contract: at once
	causeFailed        = "failed"         // the handler failed at the last delivery
	causeMaxDeliveries = "max_deliveries" // the server gave up: the process crashed or hung each time
)

// deadLetters publishes copies of messages the consumer gives up on to
// <prefix>.<original subject>, e.g. callcenter-dlq.callcenter.acme.call.created,
// with the reason and the original position in headers. It publishes through
// JetStream and waits for the stored acknowledgement: a copy nobody stores would
// be a silent loss.
type deadLetters struct {
	js     jetstream.JetStream
	prefix string
}

func (d *deadLetters) subject(original string) string { return d.prefix + "." + original }

// letter is a message given up on, where it came from, and why.
type letter struct {
	subject    string
	header     nats.Header
	data       []byte
	stream     string
	consumer   string
	seq        uint64
	deliveries uint64
	reason     string
}

func (d *deadLetters) publish(ctx context.Context, l letter) error {
	h := nats.Header{}
	for k, v := range l.header {
		if !strings.HasPrefix(strings.ToLower(k), "nats-") { // Nats-Msg-Id, Nats-Expected-*: the original's, not the copy's
			h[k] = v
		}
	}
	// One copy per message and consumer, even if we give up on it twice.
	h.Set(jetstream.MsgIDHeader, fmt.Sprintf("dlq:%s:%s:%d", l.stream, l.consumer, l.seq))
	h.Set(HeaderDLQReason, strings.Join(strings.Fields(l.reason), " ")) // one line: headers cannot hold newlines
	h.Set(HeaderDLQStream, l.stream)
	h.Set(HeaderDLQSequence, strconv.FormatUint(l.seq, 10))
	h.Set(HeaderDLQSubject, l.subject)
	h.Set(HeaderDLQConsumer, l.consumer)
	h.Set(HeaderDLQDeliveries, strconv.FormatUint(l.deliveries, 10))
	subj := d.subject(l.subject)
	if _, err := d.js.PublishMsg(ctx, &nats.Msg{Subject: subj, Header: h, Data: l.data}); err != nil {
		return fmt.Errorf("publish dead letter to %s: %w", subj, err)
	}
	return nil
}

// deadLetter publishes a copy to the dead-letter subject, then terminates the
// message. If the copy cannot be stored, the message is kept (nak) rather than lost.
func (p *processor) deadLetter(ctx context.Context, msg jetstream.Msg, md *jetstream.MsgMetadata, cause, reason string, log zerolog.Logger) {
	l := letter{subject: msg.Subject(), header: msg.Headers(), data: msg.Data(), stream: md.Stream, consumer: md.Consumer,
		seq: md.Sequence.Stream, deliveries: md.NumDelivered, reason: reason}
	if err := p.dead.publish(ctx, l); err != nil {
		log.Error().Err(err).Str("reason", reason).Msg("dead-letter copy failed; keeping the message")
		p.nak(msg, p.delay(md.NumDelivered), log)
		return
	}
	p.metrics.deadLetters.WithLabelValues(cause).Inc()
	log.Error().Str("reason", reason).Str("dead_letter", p.dead.subject(msg.Subject())).Msg("dead-lettered")
	if err := msg.TermWithReason(reason); err != nil {
		log.Warn().Err(err).Msg("term failed; the message will be redelivered and dead-lettered again")
	}
}

// ensureDeadLetterStream makes sure some stream stores <prefix>.>: an existing one
// is used as it is, otherwise <stream>_DLQ is created, kept until deleted by hand.
func ensureDeadLetterStream(ctx context.Context, js jetstream.JetStream, stream, prefix string) (string, bool, error) {
	name, err := js.StreamNameBySubject(ctx, prefix+".>")
	if err == nil {
		return name, false, nil
	}
	if !errors.Is(err, jetstream.ErrStreamNotFound) {
		return "", false, fmt.Errorf("look up the dead-letter stream: %w", err)
	}
	name = stream + "_DLQ"
	_, err = js.CreateStream(ctx, jetstream.StreamConfig{
		Name:        name,
		Description: "callbus consumers' dead letters",
		Subjects:    []string{prefix + ".>"},
		Storage:     jetstream.FileStorage,
	})
	if err != nil && !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
		return "", false, fmt.Errorf("create dead-letter stream %s: %w", name, err)
	}
	return name, err == nil, nil
}
