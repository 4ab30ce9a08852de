// Package audit checks an event stream the way an independent consumer would: it
// reads every message of the stream, validates envelopes and headers, checks that
// ids are unique and status chains consistent, and compares what was published
// with the simulator's ground truth. Tests and benchmarks share it.
package audit

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/streamread"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Message is one stream message.
type Message struct {
	Seq       uint64
	Subject   string
	Header    nats.Header
	Published time.Time // when the stream stored it
	Body      []byte    // the message body as published
	Event     events.Envelope
	DecodeErr error
}

// ReadStream returns every message of stream up to its last sequence as of the
// call, in order, through an ordered consumer.
func ReadStream(ctx context.Context, js jetstream.StreamManager, stream string) ([]Message, error) {
	s, err := js.Stream(ctx, stream)
	if err != nil {
		return nil, fmt.Errorf("audit: stream %s: %w", stream, err)
	}
	var out []Message
	err = streamread.Read(ctx, s, jetstream.OrderedConsumerConfig{}, func(m jetstream.Msg, md *jetstream.MsgMetadata) error {
		msg := Message{Seq: md.Sequence.Stream, Subject: m.Subject(), Header: m.Headers(), Published: md.Timestamp, Body: m.Data()}
		msg.DecodeErr = json.Unmarshal(m.Data(), &msg.Event)
		out = append(out, msg)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	return out, nil
}
