package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"
)

// maxDeliveriesAdvisory is the subject on which the server announces that a
// message of stream's consumer reached MaxDeliver without an ack or a term. That
// happens to a message that crashes or hangs the process at every delivery: the
// processor never gets to dead-letter it itself.
func maxDeliveriesAdvisory(stream, consumer string) string {
	return "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES." + stream + "." + consumer
}

// advisory is the part of the server's max-deliveries advisory we use.
type advisory struct {
	Stream     string `json:"stream"`
	Consumer   string `json:"consumer"`
	StreamSeq  uint64 `json:"stream_seq"`
	Deliveries uint64 `json:"deliveries"`
}

// watchMaxDeliveries dead-letters the messages the server gave up on: on each
// advisory it reads the message from the stream and publishes its copy. The
// replicas share the work through a queue group; the copy's Nats-Msg-Id makes a
// second copy a no-op. Advisories are core NATS messages: one sent while no
// replica is connected is missed, and its message stays in the stream without a
// dead-letter copy (the consumer moves on; its ack floor shows the gap).
func watchMaxDeliveries(ctx context.Context, nc *nats.Conn, js jetstream.JetStream, dead *deadLetters, m *metrics, stream, durable string, log zerolog.Logger) (*nats.Subscription, error) {
	subj := maxDeliveriesAdvisory(stream, durable)
	sub, err := nc.QueueSubscribe(subj, "consumer-example-"+durable, func(msg *nats.Msg) {
		var a advisory
		if err := json.Unmarshal(msg.Data, &a); err != nil {
			log.Error().Err(err).Msg("unreadable max-deliveries advisory")
			return
		}
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if err := deadLetterBySeq(ctx, js, dead, a); err != nil {
			log.Error().Err(err).Uint64("seq", a.StreamSeq).Msg("message over max deliveries not dead-lettered")
			return
		}
		m.deadLetters.WithLabelValues(causeMaxDeliveries).Inc()
		log.Error().Uint64("seq", a.StreamSeq).Uint64("delivered", a.Deliveries).Msg("dead-lettered: max deliveries reached")
	})
	if err != nil {
		return nil, fmt.Errorf("subscribe %s: %w", subj, err)
	}
	return sub, nil
}

func deadLetterBySeq(ctx context.Context, js jetstream.JetStream, dead *deadLetters, a advisory) error {
	s, err := js.Stream(ctx, a.Stream)
	if err != nil {
		return fmt.Errorf("stream %s: %w", a.Stream, err)
	}
	raw, err := s.GetMsg(ctx, a.StreamSeq)
	if err != nil {
		return fmt.Errorf("get message %d: %w", a.StreamSeq, err)
	}
	return dead.publish(ctx, letter{subject: raw.Subject, header: raw.Header, data: raw.Data, stream: a.Stream,
		consumer: a.Consumer, seq: a.StreamSeq, deliveries: a.Deliveries,
		reason: fmt.Sprintf("max deliveries (%d) reached without an ack: the process crashed or hung while handling it", a.Deliveries)})
}
