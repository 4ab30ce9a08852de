package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Headers of a dead-lettered copy, besides the original message's own.
const (
	HeaderDLQReason     = "Callbus-Dlq-Reason"     // why it was given up
	HeaderDLQStream     = "Callbus-Dlq-Stream"     // the stream it came from
	HeaderDLQSequence   = "Callbus-Dlq-Sequence"   // its sequence there
	HeaderDLQSubject    = "Callbus-Dlq-Subject"    // its subject there
	HeaderDLQConsumer   = "Callbus-Dlq-Consumer"   // the consumer that gave up
	HeaderDLQDeliveries = "Callbus-Dlq-Deliveries" // deliveries before giving up
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

func (d *deadLetters) publish(ctx context.Context, msg jetstream.Msg, md *jetstream.MsgMetadata, reason string) error {
	h := nats.Header{}
	for k, v := range msg.Headers() {
		if !strings.HasPrefix(strings.ToLower(k), "nats-") { // Nats-Msg-Id, Nats-Expected-*: the original's, not the copy's
			h[k] = v
		}
	}
	// One copy per message and consumer, even if the term is lost and we give up twice.
	h.Set(jetstream.MsgIDHeader, fmt.Sprintf("dlq:%s:%s:%d", md.Stream, md.Consumer, md.Sequence.Stream))
	h.Set(HeaderDLQReason, strings.Join(strings.Fields(reason), " ")) // one line: headers cannot hold newlines
	h.Set(HeaderDLQStream, md.Stream)
	h.Set(HeaderDLQSequence, strconv.FormatUint(md.Sequence.Stream, 10))
	h.Set(HeaderDLQSubject, msg.Subject())
	h.Set(HeaderDLQConsumer, md.Consumer)
	h.Set(HeaderDLQDeliveries, strconv.FormatUint(md.NumDelivered, 10))
	subj := d.subject(msg.Subject())
	if _, err := d.js.PublishMsg(ctx, &nats.Msg{Subject: subj, Header: h, Data: msg.Data()}); err != nil {
		return fmt.Errorf("publish dead letter to %s: %w", subj, err)
	}
	return nil
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
